import { z } from 'zod';
import { name } from '../base/schema-helpers.js';
import { INTEGRATIONS } from './integrations/integration-list.js';

type Definitions = (typeof INTEGRATIONS)[number];

/** `name` plus one optional section per integration kind of the registry list. */
type ReceiverShape = { name: ReturnType<typeof name> } & { [D in Definitions as D['kind']]: z.ZodOptional<D['schema']> };

function receiverShape(): ReceiverShape {
  const shape: Record<string, z.ZodType> = { name: name() };
  for (const definition of INTEGRATIONS) shape[definition.kind] = definition.schema.optional();
  // Built from the same list the type is: each key holds exactly the schema the type names.
  return shape as ReceiverShape;
}

/**
 * A receiver: a name and any of the integrations of the registry list (a receiver may combine several).
 * Secrets also accept a `*_file` form, resolved by the config loader before validation.
 */
export const receiverSchema = z.strictObject(receiverShape());

export type ReceiverConfig = z.output<typeof receiverSchema>;
