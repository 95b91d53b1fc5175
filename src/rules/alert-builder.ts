import type { Labels, TransferSample } from '../alerts/alert.js';
import type { AlertCandidate } from '../alerts/alert-candidate.js';
import type { RuleBase } from './rule-schema.js';
import { compileTemplate, type RenderTemplate, type TemplateContext } from './template.js';

/**
 * Turns a rule's group labels and values into an alert candidate: labels are alertname, severity, the group
 * labels, then the rule's own (templated) labels; annotations are the rule's templates, falling back to the
 * type's defaults. Templates are compiled once per rule. The rule's `for` and `keep_firing_for` (for the types
 * that have them) hold for every alert it builds.
 */
export class AlertBuilder {
  private readonly labelTemplates: [string, RenderTemplate][];
  private readonly annotationTemplates: [string, RenderTemplate][];
  /**
   * The label set built for a group, by the group's labels object, when the rule's labels are constant text: a
   * group keeps its labels object for life, so its alert's label set is the same at every evaluation. One frozen
   * object per group lets the alert store fingerprint it once instead of at every evaluation.
   */
  private readonly labelsByGroup: WeakMap<Labels, { severity: string; labels: Labels }> | undefined;

  constructor(
    private readonly rule: RuleBase & { for?: number; keep_firing_for?: number },
    defaultAnnotations: Record<string, string>,
    /** Annotation templates to use instead of the rule's `annotations` (e.g. missing_file's warnings). */
    annotationTemplates: Record<string, string> = rule.annotations,
  ) {
    this.labelTemplates = Object.entries(rule.labels).map(([k, v]) => [k, compileTemplate(v)]);
    this.labelsByGroup = Object.values(rule.labels).every((v) => !v.includes('{{')) ? new WeakMap() : undefined;
    const annotations = { ...defaultAnnotations, ...annotationTemplates };
    this.annotationTemplates = Object.entries(annotations).map(([k, v]) => [k, compileTemplate(v)]);
  }

  build(opts: {
    groupLabels: Labels;
    values: Record<string, number | string>;
    /** Extra template variables that are not stored on the alert (formatted forms). */
    display?: TemplateContext;
    samples?: TransferSample[];
    extraLabels?: Labels;
    severity?: string;
  }): AlertCandidate {
    const severity = opts.severity ?? this.rule.severity;
    const context: TemplateContext = {};
    copyInto(context, opts.values);
    if (opts.display) copyInto(context, opts.display);
    context['alertname'] = this.rule.name;
    context['severity'] = severity;
    const known = opts.extraLabels ? undefined : this.labelsByGroup?.get(opts.groupLabels);
    let labels: Labels;
    if (known?.severity === severity) {
      labels = known.labels;
    } else {
      labels = this.labelsFor(opts.groupLabels, opts.extraLabels, severity, context);
      if (this.labelsByGroup && !opts.extraLabels) this.labelsByGroup.set(opts.groupLabels, { severity, labels: Object.freeze(labels) });
    }
    // Annotations see the rule's labels too.
    context['labels'] = labels;
    const annotations: Record<string, string> = {};
    for (const [k, render] of this.annotationTemplates) annotations[k] = render(context);
    const values: Record<string, number | string> = { rule_type: this.rule.type };
    copyInto(values, opts.values);
    return {
      labels,
      annotations,
      // rule_type lets notification templates and inhibition tell the kinds apart without a label.
      values,
      samples: opts.samples ?? [],
      for: this.rule.for ?? 0,
      keepFiringFor: this.rule.keep_firing_for ?? 0,
    };
  }

  private labelsFor(groupLabels: Labels, extraLabels: Labels | undefined, severity: string, context: TemplateContext): Labels {
    // Plain assignments, not object spreads: spreading several objects into one literal made V8 build each
    // result the slow way, and with 1,000 rules every firing alert is built again at every evaluation.
    const base: Labels = { alertname: this.rule.name, severity };
    copyInto(base, groupLabels);
    if (extraLabels) copyInto(base, extraLabels);
    if (this.labelTemplates.length === 0) return base;
    // Label templates see the group's labels (`{{labels.user}}`).
    context['labels'] = base;
    const labels = copyInto({}, base);
    for (const [k, render] of this.labelTemplates) labels[k] = render(context);
    return labels;
  }
}

function copyInto<T>(target: Record<string, T>, source: Readonly<Record<string, T>>): Record<string, T> {
  for (const key in source) target[key] = source[key] as T;
  return target;
}
