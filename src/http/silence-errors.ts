import { errorMessage } from '../util/errors.js';
import { HttpError } from './http-error.js';

/** HTTP status of a silence the store refused: 400 invalid, 413 too large, 429 too many; undefined for other errors. */
const STATUS: Readonly<Record<string, number>> = { silence_invalid: 400, silence_too_large: 413, silence_limit: 429 };

/** The HttpError for a refused silence, or the error itself when it is something else (a 500). */
export function silenceHttpError(err: unknown): unknown {
  const code = typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  const status = code !== undefined ? STATUS[code] : undefined;
  return status !== undefined && code !== undefined ? new HttpError(status, code, errorMessage(err)) : err;
}
