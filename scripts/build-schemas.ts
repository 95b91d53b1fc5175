/**
 * Generates schemas/config.schema.json and schemas/rules.schema.json from the zod schemas, so editors
 * (yaml-language-server, via the `# yaml-language-server: $schema=...` line of the examples) complete and
 * validate config and rule files with the same rules the daemon applies.
 *
 *   npm run schemas            write the files
 *   npm run schemas -- --check exit 1 when the committed files are out of date
 *
 * The zod schemas describe the document *after* the loader's own steps, so three things are added here:
 * every secret's `<field>_file` form, `${VAR}` references where a value is not free text (an unquoted
 * `port: ${SMTP_PORT}` is typed only after substitution), and the duration syntax.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { configSchema } from '../src/config/schema.js';
import { SECRET_FIELDS } from '../src/config/secret-files.js';
import { ruleFileSchema } from '../src/rules/rule-file-schema.js';

type JsonSchema = Record<string, unknown>;

export const SCHEMAS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../schemas');

/** `${VAR}` or `${VAR:-default}`, the whole value; kept once in `$defs` and referred to. */
const ENV_REFERENCE_DEF = 'env_reference';
const ENV_REFERENCE: JsonSchema = {
  type: 'string',
  pattern: '^\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}$',
  description: 'An environment variable reference, replaced before the file is parsed.',
};

/**
 * Number-unit pairs, or a bare 0 (src/base/duration.ts). The largest-unit-first order is left to `check`:
 * saying it needs lookahead, which Go's RE2 (Helm, some editors' schema engines) does not have.
 */
const DURATION_PATTERN = '^(0|([0-9]+(ms|s|m|h|d|w))+)$';
const DURATION_DESCRIPTION = 'A duration: 250ms, 30s, 5m, 1h, 1d, 1w, or a compound such as 1h30m; 0 is zero.';

function isDuration(schema: z.core.$ZodTypes): boolean {
  // duration() (src/base/schema-helpers.ts) is the only string → transform pipe in these schemas.
  const def = schema._zod.def;
  return def.type === 'pipe' && def.in._zod.def.type === 'string' && def.out._zod.def.type === 'transform';
}

interface SchemaOptions {
  title: string;
  description: string;
  /** Names for zod's numbered `$defs` (recursive schemas), in the order zod numbers them. */
  defNames?: readonly string[];
  /** Config files have `${VAR}` substitution; rule files do not. */
  envReferences: boolean;
}

function toJsonSchema(schema: z.ZodType, options: SchemaOptions): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    // Refinements (time zones, cron expressions) cannot be said in JSON Schema; the daemon's `check` does them.
    unrepresentable: 'any',
    override: (ctx) => {
      if (isDuration(ctx.zodSchema)) {
        ctx.jsonSchema.pattern = DURATION_PATTERN;
        ctx.jsonSchema.description ??= DURATION_DESCRIPTION;
      }
    },
  }) as JsonSchema;
  let text = JSON.stringify(json);
  options.defNames?.forEach((name, i) => {
    text = text.replaceAll(`"__schema${i}"`, JSON.stringify(name)).replaceAll(`"#/$defs/__schema${i}"`, JSON.stringify(`#/$defs/${name}`));
  });
  const { $schema, $defs, ...rest } = JSON.parse(text) as JsonSchema;
  if (text.includes('__schema')) throw new Error(`unnamed $defs in "${options.title}": name them in defNames`);
  const head = { $schema, title: options.title, description: options.description };
  if (!options.envReferences) return { ...head, ...rest, ...($defs ? { $defs } : {}) };
  const defs = { ...((allowEnvReferences({ properties: $defs ?? {} }).properties ?? {}) as JsonSchema), [ENV_REFERENCE_DEF]: ENV_REFERENCE };
  return { ...head, ...allowEnvReferences(rest), $defs: defs };
}

/** A value the editor would flag only because a `${VAR}` is not yet substituted also accepts the reference. */
function allowEnvReferences(node: unknown): JsonSchema {
  if (Array.isArray(node)) return node.map(allowEnvReferences) as unknown as JsonSchema;
  if (typeof node !== 'object' || node === null) return node as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === 'properties' || key === '$defs' || key === 'items' || key === 'anyOf' || key === 'oneOf' || key === 'additionalProperties'
      ? mapChildren(key, value)
      : value;
  }
  const type = out.type;
  const constrained =
    type === 'integer' || type === 'number' || type === 'boolean' ||
    (type === 'string' && (out.pattern !== undefined || out.format !== undefined || out.enum !== undefined));
  if (!constrained) return out;
  const { default: dflt, description, ...value } = out;
  return {
    ...(description !== undefined ? { description } : {}),
    ...(dflt !== undefined ? { default: dflt } : {}),
    anyOf: [value, { $ref: `#/$defs/${ENV_REFERENCE_DEF}` }],
  };
}

function mapChildren(key: string, value: unknown): unknown {
  if (key === 'properties' || key === '$defs') {
    return Object.fromEntries(Object.entries(value as JsonSchema).map(([k, v]) => [k, allowEnvReferences(v)]));
  }
  return allowEnvReferences(value);
}

/** Adds `<field>_file` next to every secret field; exactly one of the two may be set. */
function addSecretFileForms(root: JsonSchema): void {
  for (const pattern of SECRET_FIELDS) {
    const field = pattern[pattern.length - 1] as string;
    const parent = walk(root, pattern.slice(0, -1));
    const properties = parent?.properties as Record<string, JsonSchema> | undefined;
    if (!parent || !properties?.[field]) throw new Error(`secret field ${pattern.join('.')} is not in the config schema`);
    const fileKey = `${field}_file`;
    properties[fileKey] = {
      type: 'string',
      minLength: 1,
      description: `File to read "${field}" from (relative to the config file's folder; a trailing newline is removed). Do not set both.`,
    };
    const required = (parent.required as string[] | undefined) ?? [];
    const alternatives: JsonSchema[] = [{ not: { required: [field, fileKey] } }];
    if (required.includes(field)) {
      parent.required = required.filter((k) => k !== field);
      if ((parent.required as string[]).length === 0) delete parent.required;
      alternatives.push({ anyOf: [{ required: [field] }, { required: [fileKey] }] });
    }
    parent.allOf = [...((parent.allOf as JsonSchema[] | undefined) ?? []), ...alternatives];
  }
}

function walk(node: JsonSchema, steps: readonly string[]): JsonSchema | undefined {
  let at: JsonSchema | undefined = node;
  for (const step of steps) {
    if (!at) return undefined;
    at = step === '*' ? (at.items as JsonSchema | undefined) : (at.properties as Record<string, JsonSchema> | undefined)?.[step];
  }
  return at;
}

/** File name (in schemas/) → its text. */
export function buildSchemas(): Record<string, string> {
  const config = toJsonSchema(configSchema, {
    title: 'transfer-watch configuration',
    description: 'The transfer-watch config file. Reference: docs/configuration.md. Validate with `transfer-watch check --config FILE`.',
    defNames: ['route'],
    envReferences: true,
  });
  addSecretFileForms(config);
  const rules = toJsonSchema(ruleFileSchema(), {
    title: 'transfer-watch rule file',
    description: 'A transfer-watch rule file (`rules: [...]`, each rule told apart by `type`). Reference: docs/rules.md. Test with `transfer-watch test-rules`.',
    envReferences: false,
  });
  const text = (schema: JsonSchema) => `${JSON.stringify(schema, null, 2)}\n`;
  return { 'config.schema.json': text(config), 'rules.schema.json': text(rules) };
}

/** Names of the files in `dir` whose content differs from what buildSchemas() makes. */
export function outdatedSchemas(dir = SCHEMAS_DIR): string[] {
  return Object.entries(buildSchemas())
    .filter(([name, text]) => {
      try {
        return readFileSync(path.join(dir, name), 'utf8') !== text;
      } catch {
        return true;
      }
    })
    .map(([name]) => name);
}

function main(argv: readonly string[]): number {
  if (argv.includes('--check')) {
    const outdated = outdatedSchemas();
    for (const name of outdated) console.error(`schemas/${name} is out of date: run npm run schemas`);
    return outdated.length > 0 ? 1 : 0;
  }
  for (const [name, text] of Object.entries(buildSchemas())) {
    writeFileSync(path.join(SCHEMAS_DIR, name), text);
    console.log(`wrote schemas/${name}`);
  }
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
