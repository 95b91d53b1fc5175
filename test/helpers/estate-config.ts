import { writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A config for the simulator's estate (contract section 13 tests): one source, São Paulo's zone, Brazil's business
 * calendar, and a rule file watching BANCO001's statement (the flow `discover` and `/flows` must name as watched).
 * `extra` lines are added to the config as written. Returns the config file's path.
 */
export function writeEstateConfig(dir: string, simUrl: string, extra: readonly string[] = []): string {
  const file = path.join(dir, 'config.yaml');
  writeFileSync(
    file,
    [
      'sources:',
      '  - name: mft',
      `    base_url: ${simUrl}`,
      '    username: demo',
      '    password: demo',
      'display_timezone: America/Sao_Paulo',
      'rule_files: [watched.yaml]',
      'calendars:',
      '  BR:',
      '    holidays: { country: BR }',
      '    exclude_weekdays: [sat, sun]',
      ...extra,
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(dir, 'watched.yaml'),
    ['rules:', '  - name: Banco001Statement', '    type: missing_file', '    match: { user: [BANCO001], file: ["EXTRATO_*.RET"] }', '    deadline: "0 11 * * 1-5"', '    timezone: America/Sao_Paulo', '    window: 6h', ''].join('\n'),
  );
  return file;
}
