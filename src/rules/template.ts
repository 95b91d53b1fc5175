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
 * Compile a template checked by `checkTemplate`. Each call uses its own Handlebars environment (no shared state).
 * Compiled now, when the rule loads: `Handlebars.compile` would defer the work to the first render, i.e. to the
 * first evaluation in which the rule fires, where with 1,000 rules it cost more than building the alerts did.
 * `precompile` + `template` is what `compile` does internally, just eagerly.
 */
export function compileTemplate(source: string): RenderTemplate {
  // Without `{{` there is nothing for Handlebars to do (it would output the text as is), but each render
  // would still pay for its runtime setup; constant labels such as `team: payments` are rendered per alert.
  if (!source.includes('{{')) return () => source;
  const plain = plainParts(source);
  if (plain) return renderPlain(plain);
  const env = Handlebars.create();
  const spec: unknown = new Function(`return ${env.precompile(source, COMPILE_OPTIONS)}`)();
  const render = env.template(spec as Parameters<typeof env.template>[0]);
  return (context) => render(context);
}

/** Text, or the property path of a `{{a.b}}` to look up in the context. */
type PlainPart = string | readonly string[];

/** Names Handlebars calls as its built-in helpers even without arguments (knownHelpersOnly). */
const BUILT_IN_HELPERS = new Set(['helperMissing', 'blockHelperMissing', 'each', 'if', 'unless', 'with', 'log', 'lookup']);

/**
 * The parts of a template that is only text and `{{path}}`s (the usual `{{count}} failed transfers for
 * {{labels.user}}`), or undefined for anything else (blocks, helpers, `this`, `../`, `@data`, literals), which
 * Handlebars renders. Why: every render through Handlebars' runtime sets up helpers, data and prototype-access
 * control, ~10 µs; with 1,000 rules every firing alert renders its annotations at every evaluation, and that
 * setup was the largest part of building alerts. `Handlebars.parse` has already applied whitespace control
 * (`{{~x~}}`, standalone comments) to the text parts.
 */
export function plainParts(source: string): PlainPart[] | undefined {
  const ast: unknown = Handlebars.parse(source);
  if (!isAstNode(ast) || !Array.isArray(ast['body'])) return undefined;
  const parts: PlainPart[] = [];
  for (const node of ast['body'] as unknown[]) {
    if (!isAstNode(node)) return undefined;
    if (node.type === 'ContentStatement' && typeof node['value'] === 'string') {
      if (node['value'] !== '') parts.push(node['value']);
    } else if (node.type === 'CommentStatement') {
      continue;
    } else if (node.type === 'MustacheStatement') {
      const path = node['path'];
      const params = node['params'];
      if (!Array.isArray(params) || params.length > 0 || node['hash'] !== undefined || !isAstNode(path)) return undefined;
      if (path.type !== 'PathExpression' || path['data'] !== false || path['depth'] !== 0) return undefined;
      const names = path['parts'];
      const original = path['original'];
      if (!Array.isArray(names) || names.length === 0 || !names.every((n): n is string => typeof n === 'string')) return undefined;
      if (typeof original !== 'string' || /^(this\b|\.)/.test(original)) return undefined;
      if (names.length === 1 && BUILT_IN_HELPERS.has(names[0] as string)) return undefined;
      parts.push(names);
    } else {
      return undefined;
    }
  }
  return parts;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Renders plain parts exactly as Handlebars' compiled code does with `noEscape`: each step of a path is an own
 * property (Handlebars' prototype-access control denies inherited ones: `{{constructor}}` is empty), a function
 * value is called with the context as `this`, null and undefined are empty strings, and the parts are joined
 * with JavaScript's `+` left to right before one final conversion to a string, so two numbers in a row add up
 * (`{{a}}{{b}}` with 1 and 2 renders "3", as Handlebars does). test/property/template.property.test.ts compares
 * the two on generated templates and contexts.
 */
function renderPlain(parts: readonly PlainPart[]): RenderTemplate {
  return (context) => {
    let out: unknown = '';
    let first = true;
    for (const part of parts) {
      const value = typeof part === 'string' ? part : lookup(context, part);
      out = first ? value : plus(out, value);
      first = false;
    }
    return `${out as string}`;
  };
}

function lookup(context: TemplateContext, path: readonly string[]): unknown {
  let value: unknown = context;
  for (const name of path) {
    const next: unknown = (value as Record<string, unknown>)[name];
    value = next == null || hasOwn.call(value, name) ? next : undefined;
    if (value == null) return '';
  }
  if (typeof value === 'function') value = (value as (this: unknown) => unknown).call(context);
  return value ?? '';
}

function plus(a: unknown, b: unknown): unknown {
  return (a as number) + (b as number);
}
