import { z } from 'zod';
import { parseDuration } from './duration.js';

/** A duration string (`30s`, `5m`, ...) parsed into milliseconds. */
export const duration = () =>
  z.string().transform((text, ctx) => {
    try {
      return parseDuration(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });

/** An IANA time zone name, checked against the runtime's ICU data. */
export const timeZone = () =>
  z.string().refine(
    (tz) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    },
    { message: 'unknown time zone (use an IANA name such as UTC or America/Sao_Paulo)' },
  );

/** Names used as label values and state keys. */
export const name = () =>
  z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, 'must contain only letters, digits, "_", "." and "-"');
