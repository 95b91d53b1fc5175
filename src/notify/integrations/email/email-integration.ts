import { readFileSync } from 'node:fs';
import { TransferWatchError } from '../../../util/errors.js';
import { redactSecrets } from '../../../util/redact.js';
import { EMAIL_SECRET_PATHS, emailConfigSchema, type EmailConfig } from './email-schema.js';
import { defineIntegration } from '../integration-definition.js';
import { NotifyError, type Integration, type Notification } from '../../notification.js';
import { defaultEmailHtml, defaultEmailSubject, defaultEmailText } from './default-email-template.js';
import { escapeHtml, escapePlain, sanitizeHeader } from '../../templates/escape.js';
import { buildTemplateContext } from '../../templates/template-context.js';
import { resolveUserTemplate } from '../../templates/template-set.js';
import { abortable } from '../shared/abortable.js';
import type { IntegrationDeps } from '../shared/integration-deps.js';

export const EMAIL_DEFAULT_TIMEOUT_MS = 30_000;

/** The parts of one mail, each rendered from a context escaped for where it goes. */
export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

/**
 * Email over SMTP (nodemailer): STARTTLS when the server offers it (`require_tls` makes it mandatory),
 * TLS from the first byte with `secure`, AUTH when a username is set. Multipart text + HTML; the subject
 * starts like Slack's text. Subject values have CR/LF removed; HTML values are HTML-escaped.
 */
export function createEmailIntegration(config: EmailConfig, deps: IntegrationDeps): Integration {
  const subjectTemplate = resolveUserTemplate(config.subject_template, deps.templates);
  const textTemplate = resolveUserTemplate(config.text_template, deps.templates);
  const htmlTemplate = resolveUserTemplate(config.html_template, deps.templates);
  const smtp = config.smtp;
  const options = smtpTransportOptions(smtp, deps.fetchTimeoutMs ?? EMAIL_DEFAULT_TIMEOUT_MS);
  // nodemailer is loaded when an email receiver is configured, not by every daemon (~13 MB of RSS).
  const transport = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(options));
  // Awaited by every send; a failed load surfaces there, not as an unhandled rejection.
  transport.catch(() => undefined);
  const secrets = [smtp.password, smtp.username];

  function render(n: Notification): EmailMessage {
    const headerCtx = buildTemplateContext(n, sanitizeHeader);
    const textCtx = buildTemplateContext(n, escapePlain);
    const htmlCtx = buildTemplateContext(n, escapeHtml);
    return {
      // The template text itself may hold newlines too: the whole subject is sanitised once more.
      subject: sanitizeHeader(subjectTemplate ? subjectTemplate(headerCtx) : defaultEmailSubject(headerCtx)).trim(),
      text: textTemplate ? textTemplate(textCtx) : defaultEmailText(textCtx),
      html: htmlTemplate ? htmlTemplate(htmlCtx) : defaultEmailHtml(htmlCtx),
    };
  }

  return {
    kind: 'email',
    sendResolved: config.send_resolved,
    async send(n, signal) {
      const message = render(n);
      const sending = (await transport).sendMail({ from: config.from, to: config.to, ...message }).catch((err: unknown) => {
        throw smtpError(err, smtp.host, secrets);
      });
      await abortable('email', sending, signal);
    },
  };
}

/**
 * nodemailer's transport options for a receiver's `smtp:` (STARTTLS or TLS, AUTH, the CA, timeouts): the alert
 * integration and the scheduled SLA reports send through the same settings.
 */
export function smtpTransportOptions(smtp: EmailConfig['smtp'], timeoutMs: number) {
  const ca = smtp.tls.ca_file ? readCa(smtp.tls.ca_file) : undefined;
  return {
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    requireTLS: smtp.require_tls,
    ...(smtp.username ? { auth: { user: smtp.username, pass: smtp.password } } : {}),
    tls: {
      rejectUnauthorized: !smtp.tls.insecure_skip_verify,
      ...(ca ? { ca } : {}),
    },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  };
}

function readCa(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new TransferWatchError('email_ca_unreadable', `email: cannot read tls.ca_file ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * SMTP replies 4xx are transient and 5xx permanent (RFC 5321), rejected addresses and messages too; connection
 * problems and timeouts are transient. Authentication failures (530/534/535, EAUTH) are retried with backoff:
 * a rotated password is fixed by a reload, and the page must still go out then rather than be dropped.
 */
function smtpError(err: unknown, host: string, secrets: string[]): NotifyError {
  const detail = redactSecrets(err instanceof Error ? err.message : String(err), secrets);
  const responseCode: unknown = typeof err === 'object' && err !== null ? Reflect.get(err, 'responseCode') : undefined;
  const code: unknown = typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
  let retryable: boolean;
  if (code === 'EAUTH' || responseCode === 530 || responseCode === 534 || responseCode === 535) retryable = true;
  else if (typeof responseCode === 'number') retryable = responseCode >= 400 && responseCode < 500;
  else retryable = !(code === 'EENVELOPE' || code === 'EMESSAGE' || code === 'ETLS');
  return new NotifyError(`email: sending via ${host} failed: ${detail}`, retryable);
}

export const emailIntegration = defineIntegration({
  kind: 'email',
  schema: emailConfigSchema,
  secretPaths: EMAIL_SECRET_PATHS,
  create: createEmailIntegration,
});
