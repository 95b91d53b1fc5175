import { z } from 'zod';

/** `send_resolved` defaults to true, as in Alertmanager. */
const sendResolved = z.boolean().default(true);

/** One line per notification on stdout: the receiver's `console:` section. */
export const consoleConfigSchema = z.strictObject({
  send_resolved: sendResolved,
});

export type ConsoleConfig = z.output<typeof consoleConfigSchema>;

/** Secret fields of this section (see IntegrationDefinition.secretPaths). */
export const CONSOLE_SECRET_PATHS: readonly (readonly string[])[] = [];
