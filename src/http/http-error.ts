import { TransferWatchError } from '../util/errors.js';

/** An error answered to the client with its HTTP status and message (as `{status:"error", error}`). */
export class HttpError extends TransferWatchError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    /** Extra response headers (e.g. `Allow` on 405). */
    readonly headers: Record<string, string> = {},
  ) {
    super(code, message);
    this.name = 'HttpError';
  }
}
