import { expect } from 'vitest';

/** The error `work` rejects with, asserted to be a `type` (a test fails when it resolves or rejects otherwise). */
export async function rejectionOf<T>(work: Promise<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  return err as T;
}
