/**
 * Typed errors with a stable `code`, so callers and tests branch on the code and never on the message.
 * Every error the project throws on purpose is a TransferWatchError (or a subclass with a narrower code).
 */
export class TransferWatchError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransferWatchError';
    this.code = code;
  }
}

/** True when `err` is one of ours with the given code. */
export function hasCode(err: unknown, code: string): boolean {
  return err instanceof TransferWatchError && err.code === code;
}

/** A readable one-line message for any thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * `errorMessage`, led by the error's code when it has one (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9464`): how a
 * request that got no answer says why, whichever HTTP client it went through.
 */
export function errorMessageWithCode(err: unknown): string {
  const code: unknown = err instanceof Error ? Reflect.get(err, 'code') : undefined;
  return typeof code === 'string' ? `${code}: ${errorMessage(err)}` : errorMessage(err);
}

/**
 * A thrown value as a log field (pino's `err` shape): its type and message, the code of our own errors, and the
 * stack only of unexpected ones (a TransferWatchError is a known condition; its stack would be noise). The
 * message is the same text `errorMessage` gives, so nothing more is said than before.
 */
export function errorFields(err: unknown): { type: string; message: string; code?: string; stack?: string } {
  if (!(err instanceof Error)) return { type: typeof err, message: String(err) };
  const raw: unknown = Reflect.get(err, 'code');
  const code = typeof raw === 'string' ? raw : undefined;
  return {
    type: err.name,
    message: err.message,
    ...(code !== undefined ? { code } : {}),
    ...(err instanceof TransferWatchError || err.stack === undefined ? {} : { stack: err.stack }),
  };
}

/** A fenced write's refusal: the lease it needed is another replica's (or nobody's) now; the store itself is fine. */
export function isFencedError(err: unknown): boolean {
  return err instanceof TransferWatchError && err.code === 'ha_fenced';
}
