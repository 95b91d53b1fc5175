import { z } from 'zod';

/** `send_resolved` defaults to true, as in Alertmanager. */
const sendResolved = z.boolean().default(true);

/** Email over SMTP: the receiver's `email:` section. */
export const emailConfigSchema = z.strictObject({
  smtp: z.strictObject({
    host: z.string().min(1),
    port: z.number().int().min(1).max(65535).default(587),
    /** true: TLS from the first byte (port 465). false: STARTTLS when the server offers it. */
    secure: z.boolean().default(false),
    require_tls: z.boolean().default(false),
    username: z.string().default(''),
    password: z.string().default(''),
    tls: z.strictObject({ ca_file: z.string().default(''), insecure_skip_verify: z.boolean().default(false) }).prefault({}),
  }),
  from: z.string().min(1),
  to: z.array(z.string().min(1)).min(1),
  send_resolved: sendResolved,
  subject_template: z.string().optional(),
  text_template: z.string().optional(),
  html_template: z.string().optional(),
});

export type EmailConfig = z.output<typeof emailConfigSchema>;

/** Secret fields of this section (see IntegrationDefinition.secretPaths). */
export const EMAIL_SECRET_PATHS: readonly (readonly string[])[] = [['smtp', 'password']];
