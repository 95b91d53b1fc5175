import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import Handlebars from 'handlebars';
import { TransferWatchError } from '../../util/errors.js';

/** A compiled template: context in, text out. */
export type RenderTemplate = (context: object) => string;

/**
 * User templates loaded from files (config `templates:`). Each file is one Handlebars template named
 * after its base name without extension (`templates/slack-text.hbs` → `slack-text`); every loaded
 * template is also a partial (`{{> slack-text}}`), so files can share pieces.
 *
 * A receiver option such as `template: slack-text` names a loaded template; a value containing `{{`
 * is taken as inline Handlebars source, so short templates need no file. Anything else is an unknown
 * name and an error.
 */
export class TemplateSet {
  private readonly env: typeof Handlebars;
  private readonly compiled = new Map<string, RenderTemplate>();

  constructor(sources: ReadonlyMap<string, string> = new Map()) {
    // An isolated environment: partials and helpers of one config never leak into another (reloads, tests).
    this.env = Handlebars.create();
    for (const [name, source] of sources) {
      this.env.registerPartial(name, source);
      this.compiled.set(name, this.compile(source, name));
    }
  }

  /** Names of the templates loaded from files. */
  names(): string[] {
    return [...this.compiled.keys()];
  }

  has(name: string): boolean {
    return this.compiled.has(name);
  }

  /**
   * The template called `ref`, or `ref` compiled as inline source. Values are escaped for the channel
   * by the caller before rendering (see escape.ts), so the template itself never HTML-escapes.
   */
  resolve(ref: string): RenderTemplate {
    const loaded = this.compiled.get(ref);
    if (loaded) return loaded;
    // A value without any `{{` is meant as a template name: a typo must fail, not become the message text.
    if (!ref.includes('{{')) {
      const known = this.names();
      throw new TransferWatchError(
        'template_not_found',
        `no template named "${ref}" (loaded: ${known.length > 0 ? known.join(', ') : 'none'})`,
      );
    }
    return this.compile(ref, 'inline template');
  }

  private compile(source: string, what: string): RenderTemplate {
    let template: HandlebarsTemplateDelegate;
    try {
      // Parse now so a syntax error is reported at load, not at the first alert.
      Handlebars.parse(source);
      template = this.env.compile(source, { noEscape: true, strict: false });
    } catch (err) {
      throw new TransferWatchError('template_invalid', `${what}: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    return (context) => {
      try {
        return template(context);
      } catch (err) {
        throw new TransferWatchError(
          'template_render_failed',
          `${what}: ${err instanceof Error ? err.message : String(err)}`,
          { cause: err },
        );
      }
    };
  }
}

/**
 * The user's template for one message part, compiled when the integration is created so a broken
 * template fails at start-up; undefined when the option is not set (the default message is used).
 */
export function resolveUserTemplate(ref: string | undefined, templates: TemplateSet | undefined): RenderTemplate | undefined {
  if (ref === undefined) return undefined;
  return (templates ?? new TemplateSet()).resolve(ref);
}

/** Read and compile every template file; fails on unreadable files, duplicate names and syntax errors. */
export async function loadTemplateSet(files: string[]): Promise<TemplateSet> {
  const sources = new Map<string, string>();
  for (const file of files) {
    const name = basename(file, extname(file));
    if (sources.has(name)) {
      throw new TransferWatchError('template_duplicate', `${file}: a template named "${name}" is already loaded`);
    }
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new TransferWatchError('template_unreadable', `${file}: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    try {
      Handlebars.parse(text);
    } catch (err) {
      throw new TransferWatchError('template_invalid', `${file}: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    sources.set(name, text);
  }
  return new TemplateSet(sources);
}
