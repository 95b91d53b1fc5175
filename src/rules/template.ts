import Handlebars from 'handlebars';

/**
 * Rule `labels` and `annotations` are Handlebars templates over the alert's values (`{{count}}`,
 * `{{labels.user}}`, `{{window}}`, ...). Only Handlebars' built-in helpers are allowed and every variable a
 * template names must be one its rule type provides, so a typo is a load-time problem, not an empty string
 * in a 3 a.m. page. Output is plain text: each notification channel escapes for itself.
 */
export type TemplateContext = Record<string, unknown>;
export type RenderTemplate = (context: TemplateContext) => string;

const COMPILE_OPTIONS = { noEscape: true, knownHelpersOnly: true, strict: false } as const;

interface AstNode {
  type: string;
  [key: string]: unknown;
}

function isAstNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** Top-level variable names a template refers to (outside blocks that change the context). */
function referencedVariables(node: unknown, out: Set<string>, insideBlock: boolean): void {
  if (!isAstNode(node)) return;
  if (node.type === 'PathExpression' && !insideBlock) {
    const data = node['data'] === true;
    const parts = node['parts'];
    const head = Array.isArray(parts) && typeof parts[0] === 'string' ? parts[0] : undefined;
    if (!data && head !== undefined && head !== 'this') out.add(head);
    return;
  }
  const blockChangesContext =
    node.type === 'BlockStatement' && isAstNode(node['path']) && ['each', 'with'].includes(String(node['path']['original']));
  const isHelperCall =
    node.type === 'BlockStatement' ||
    ((node.type === 'MustacheStatement' || node.type === 'SubExpression') && Array.isArray(node['params']) && node['params'].length > 0);
  for (const [key, child] of Object.entries(node)) {
    if (key === 'loc') continue;
    // The path of a block or a call with arguments names a helper (knownHelpersOnly checks it), not a variable.
    if (key === 'path' && isHelperCall) continue;
    const inner = insideBlock || (blockChangesContext && (key === 'program' || key === 'inverse'));
    if (Array.isArray(child)) for (const c of child) referencedVariables(c, out, inner);
    else if (isAstNode(child)) referencedVariables(child, out, inner);
  }
}

/** A problem message for a template, or undefined when it is valid for a rule offering `variables`. */
export function checkTemplate(source: string, variables: readonly string[]): string | undefined {
  let ast: unknown;
  try {
    ast = Handlebars.parse(source);
    Handlebars.create().precompile(source, COMPILE_OPTIONS);
  } catch (err) {
    const first = err instanceof Error ? (err.message.split('\n').find((l) => l.trim() !== '') ?? err.message) : String(err);
    return `invalid template: ${first}`;
  }
  const used = new Set<string>();
  referencedVariables(ast, used, false);
  for (const name of used) {
    if (!variables.includes(name)) return `template uses unknown variable "${name}" (available: ${variables.join(', ')})`;
  }
  return undefined;
}

/**
 * The top-level variables a template reads, or undefined when it can read any of them (`@root` inside a block):
 * what a rule must compare to know whether its text can have changed.
 */
export function variablesRead(source: string): ReadonlySet<string> | undefined {
  if (source.includes('@root')) return undefined;
  const used = new Set<string>();
  referencedVariables(Handlebars.parse(source), used, false);
  return used;
}

/**
 * Compile a template checked by `checkTemplate`. Each call uses its own Handlebars environment (no shared state).
 * Compiled now, when the rule loads: `Handlebars.compile` would defer the work to the first render.
 * `precompile` + `template` is what `compile` does internally, just eagerly. Rules render only when a group's
 * values change (src/rules/alert-builder.ts), so Handlebars' per-render setup is paid per change, not per tick.
 */
export function compileTemplate(source: string): RenderTemplate {
  // Without `{{` there is nothing for Handlebars to do: constant labels such as `team: payments` are returned as is.
  if (!source.includes('{{')) return () => source;
  const plain = plainTemplate(source);
  if (plain) return plain;
  const env = Handlebars.create();
  const spec: unknown = new Function(`return ${env.precompile(source, COMPILE_OPTIONS)}`)();
  const render = env.template(spec as Parameters<typeof env.template>[0]);
  return (context) => render(context);
}

/** The helpers Handlebars knows without being told (`knownHelpersOnly`): a mustache naming one calls it. */
const BUILT_IN_HELPERS = new Set(['helperMissing', 'blockHelperMissing', 'each', 'if', 'unless', 'with', 'log', 'lookup']);

/** A piece of a plain template: its text, or the property path a mustache reads. */
type PlainPiece = string | readonly string[];

/**
 * A template of text and plain mustaches only (`{{count}}`, `{{labels.user}}`: no helpers, blocks, `@data`, `../`
 * or comments), rendered without Handlebars' runtime, which set up its helpers and prototype checks anew for
 * every render (15 of the 110 MB the 1,000-rule engine and store allocate a run). The same output as the compiled
 * template, quirks included, held to it by a property test: a property is read only when it is the parent's own
 * (Handlebars' prototype access rule), a function value is called with the context as `this`, null and undefined
 * are '', and the pieces are joined with `+` from the left as the compiled code joins them (so two numbers that
 * open a template add up, as they do in Handlebars). Undefined for any other template.
 */
function plainTemplate(source: string): RenderTemplate | undefined {
  const pieces: PlainPiece[] = [];
  for (const node of Handlebars.parse(source).body as unknown[]) {
    if (!isAstNode(node)) return undefined;
    if (node.type === 'ContentStatement') {
      const value = node['value'];
      if (typeof value !== 'string') return undefined;
      // The compiler leaves out content that whitespace control emptied: it does not separate what is around it.
      if (value !== '') pieces.push(value);
      continue;
    }
    if (node.type !== 'MustacheStatement') return undefined;
    const path = node['path'];
    const params = node['params'];
    if (!isAstNode(path) || path.type !== 'PathExpression' || path['data'] !== false || path['depth'] !== 0) return undefined;
    if (!Array.isArray(params) || params.length > 0 || node['hash'] !== undefined) return undefined;
    const parts = path['parts'];
    if (!Array.isArray(parts) || parts.length === 0 || !parts.every((p): p is string => typeof p === 'string')) return undefined;
    if (BUILT_IN_HELPERS.has(parts[0] as string)) return undefined;
    pieces.push(parts);
  }
  return (context) => {
    let out: unknown = '';
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i] as PlainPiece;
      const value = typeof piece === 'string' ? piece : valueAt(context, piece);
      // Joined as the compiled code joins its pieces (`a + b + ...`), then made a string as the runtime does.
      out = i === 0 ? value : (out as string) + (value as string);
    }
    // `'' + out`, not String(out): an object's valueOf comes first, as in the runtime's own `'' + main(...)`.
    return '' + (out as string);
  };
}

/** What a plain mustache outputs: the path read through own properties, a function called, null and undefined as ''. */
function valueAt(context: TemplateContext, path: readonly string[]): unknown {
  let current: unknown = context;
  for (const name of path) {
    if (current === null || current === undefined) break;
    const result: unknown = (current as Record<string, unknown>)[name];
    current = result === null || result === undefined || Object.prototype.hasOwnProperty.call(current, name) ? result : undefined;
  }
  if (typeof current === 'function') current = (current as (this: unknown) => unknown).call(context);
  return current ?? '';
}
