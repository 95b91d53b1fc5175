import { z } from 'zod';

/**
 * The keys an object schema accepts at a value path (`['sources', 0, 'tls']`), read from the zod schema
 * itself so suggestions for unknown keys can never drift from what validation accepts.
 * Returns [] when the path does not lead to an object schema.
 */
export function schemaKeysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const keys = new Set<string>();
  for (const target of schemasAt(schema, path)) {
    if (target instanceof z.ZodObject) for (const key of Object.keys(target.shape)) keys.add(key);
  }
  return [...keys];
}

function schemasAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): z.core.$ZodType[] {
  const current = unwrap(schema);
  if (path.length === 0) return current;
  const [segment, ...rest] = path;
  const out: z.core.$ZodType[] = [];
  for (const s of current) {
    if (s instanceof z.ZodObject && typeof segment === 'string') {
      const child: unknown = s.shape[segment];
      if (child instanceof z.core.$ZodType) out.push(...schemasAt(child, rest));
    } else if (s instanceof z.ZodArray && typeof segment === 'number') {
      out.push(...schemasAt(s.element, rest));
    } else if (s instanceof z.ZodRecord) {
      out.push(...schemasAt(s.valueType, rest));
    }
  }
  return out;
}

/** Looks through wrappers (optional, default, pipe, lazy, union) to the schemas that do the shaping. */
function unwrap(schema: z.core.$ZodType): z.core.$ZodType[] {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) {
    return unwrap(schema.unwrap());
  }
  if (schema instanceof z.ZodPipe) return unwrap(schema.in);
  if (schema instanceof z.ZodLazy) return unwrap(schema.unwrap());
  if (schema instanceof z.ZodUnion) return schema.options.flatMap((o: z.core.$ZodType) => unwrap(o));
  return [schema];
}
