import { NotifyError } from '../../notification.js';

/**
 * Stop waiting for `work` when `signal` aborts (shutdown), for clients that take no AbortSignal
 * (@slack/webhook, nodemailer). The request itself ends on its own timeout; the notification stays in
 * the outbox because the rejection is retryable.
 */
export function abortable<T>(kind: string, work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  const aborted = (): NotifyError => new NotifyError(`${kind}: send aborted`, true);
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(aborted());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
