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
