import { stringify } from 'yaml';
import { parseRuleFile } from '../src/rules/load-rules.js';
import type { RuleDefinition } from '../src/rules/registry.js';

/** Partners of the simulator's history, so generated rules match real traffic. */
const USERS = ['BANK1', 'BANK2', 'BANK3', 'ACME_EDI', 'GLOBEX_EDI', 'PAYROLL', 'CUSTODIA'];
const FILE_GLOBS = ['*.RET', '*.REM', '*.edi', 'REM_*', 'RET_*', 'ORDERS_*.edi', 'INVOIC_*.edi', 'FOLHA_*.txt', '*'];
const GROUP_BYS = [['mft_instance', 'user'], ['mft_instance', 'user', 'code'], ['file'], ['user', 'event']];

/**
 * `count` rules as a user would write them: three in four `error_burst`, one in four `missing_file`; globs on
 * instance and file, an exact user for most (so the engine's index helps as it would in real rule sets) and a
 * glob user for every fifth rule (so some rules are candidates for every transfer). Parsed through the rule
 * loader (YAML text → registry schemas), so defaults and validation are exactly the daemon's.
 */
export function benchRules(count: number): RuleDefinition[] {
  const rules: Array<Record<string, unknown>> = [];
  for (let i = 0; i < count; i++) {
    const user = i % 5 === 0 ? ['BANK?', 'GLOBEX*'] : [USERS[i % USERS.length] as string];
    if (i % 4 === 3) {
      const position = i % 8 === 3;
      rules.push({
        name: `BenchMissing${i}`,
        type: 'missing_file',
        match: { user: position ? ['CUSTODIA'] : user, event: ['reception'], file: [position ? 'POSICAO_*.RET' : 'EXTRATO_*.RET'] },
        deadline: position ? '*/10 * * * *' : '0 8 * * 1-5',
        timezone: 'America/Sao_Paulo',
        window: position ? '10m' : '8h',
        severity: 'warning',
      });
    } else {
      rules.push({
        name: `BenchBurst${i}`,
        type: 'error_burst',
        match: { mft_instance: ['PROD*'], user, file: [FILE_GLOBS[i % FILE_GLOBS.length] as string] },
        group_by: GROUP_BYS[i % GROUP_BYS.length],
        threshold: 3 + (i % 7),
        window: `${5 + (i % 4) * 5}m`,
        severity: i % 2 === 0 ? 'critical' : 'warning',
        labels: { team: `team${i % 10}` },
        annotations: { summary: '{{count}} failed transfers for {{labels.user}} in {{window}}' },
      });
    }
  }
  const parsed = parseRuleFile(`bench-rules-${count}.yaml`, stringify({ rules }, { aliasDuplicateObjects: false }));
  if (parsed.problems.length > 0) {
    throw new Error(`generated rules do not load: ${parsed.problems.map((p) => `${p.line}:${p.col} ${p.message}`).join('; ')}`);
  }
  return parsed.rules;
}
