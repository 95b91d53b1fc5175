import type { Clock } from '../../../util/clock.js';
import { redactSecrets, redactUrl } from '../../../util/redact.js';
import { NotifyError } from '../../notification.js';
import { parseRetryAfter } from '../../../base/retry-after.js';

/** 429 and 5xx can succeed later; any other 4xx means the request itself is wrong. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** The NotifyError for an HTTP answer outside 2xx. The message names the host, never the secret path. */
export function httpStatusError(
  kind: string,
  url: string,
  status: number,
  retryAfter: unknown,
  clock: Clock,
): NotifyError {
  const retryable = isRetryableStatus(status);
  const retryAfterMs = retryable ? parseRetryAfter(retryAfter, clock) : undefined;
  return new NotifyError(`${kind}: POST ${redactUrl(url)} answered HTTP ${status}`, retryable, retryAfterMs);
}

/**
 * The NotifyError for a request that got no answer (refused, reset, timed out): always retryable.
 * The underlying message is scrubbed of the URL, and the original error is not kept as `cause`
 * because HTTP clients store the full URL (with its secret) on their error objects.
 */
export function networkError(kind: string, url: string, err: unknown, secrets: string[] = []): NotifyError {
  const detail = err instanceof Error ? err.message : String(err);
  const parsed = safeUrl(url);
  const scrubbed = redactSecrets(detail, [url, ...(parsed ? [parsed.pathname + parsed.search] : []), ...secrets]);
  return new NotifyError(`${kind}: POST ${redactUrl(url)} failed: ${scrubbed}`, true);
}

function safeUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
