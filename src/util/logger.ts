import { pino, type Logger as PinoLogger, type DestinationStream, type LevelWithSilent } from 'pino';
import { errorFields } from './errors.js';

export type Logger = PinoLogger;

/**
 * Paths pino censors wherever they appear in a log object. Secrets must also never be interpolated
 * into messages: use `redactUrl` / `redactSecrets` from ./redact.ts for strings.
 */
export const REDACT_PATHS = [
  'password',
  '*.password',
  'password_file',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'webhook_url',
  '*.webhook_url',
  'bearer_token',
  '*.bearer_token',
  'routing_key',
  '*.routing_key',
]; // Config values are also redacted as text (collectSecrets, from the integration registry's secret paths).

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Where JSON lines go; stdout by default. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

/** JSON-lines logger (pino). One per process, passed down explicitly: no module-level singleton. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { name: 'transfer-watch' },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: logErr },
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}

/**
 * The `err` of a log line: its kind, message and code. Call sites pass `errorFields(err)` (a plain object) or an
 * error itself; pino's own serializer named the first `"type":"Object"` with an empty stack and no word of what
 * failed. Kept as given when it is already that shape.
 */
export function logErr(value: unknown): unknown {
  if (value instanceof Error) return errorFields(value);
  if (typeof value === 'object' && value !== null && typeof Reflect.get(value, 'type') === 'string' && typeof Reflect.get(value, 'message') === 'string') return value;
  return errorFields(value);
}

/** A logger that discards everything, for tests that do not read logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
