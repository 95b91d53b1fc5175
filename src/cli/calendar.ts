import type { Command } from 'commander';
import { ConfigError } from '../base/config-error.js';
import { formatProblem } from '../base/problem.js';
import { nearestKey } from '../base/nearest-key.js';
import { loadConfig } from '../config/load-config.js';
import { calendarYear, calendarYearOf, type CalendarYear } from '../sla/calendar-view.js';
import { errorMessage } from '../util/errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/**
 * `transfer-watch calendar show NAME --config FILE [--year Y] [--format table|json]`: which days a business calendar
 * of the config treats as holidays (and which holidays of the library it does not count), so an SLA owner can see
 * the days the ledger expects no file on before trusting it. The same JSON as `GET /api/v1/calendars/NAME`.
 */
export async function runCalendarShow(
  name: string,
  o: { config: string; year?: string | undefined; format?: string | undefined },
  io: { stdout: (text: string) => void; stderr: (text: string) => void; now: number; env?: NodeJS.ProcessEnv },
): Promise<number> {
  const year = calendarYearOf(o.year, io.now);
  if (year === undefined) {
    io.stderr(`calendar: --year must be a year such as 2026\n`);
    return EXIT_USAGE;
  }
  const format = o.format ?? 'table';
  if (format !== 'table' && format !== 'json') {
    io.stderr('calendar: --format must be table or json\n');
    return EXIT_USAGE;
  }
  let calendars;
  try {
    // Calendars need no secret: a config checked without the deployment's environment still shows them.
    calendars = (await loadConfig(o.config, { env: io.env ?? process.env, allowMissingEnv: true })).config.calendars;
  } catch (err) {
    if (err instanceof ConfigError) for (const p of err.problems) io.stderr(`${formatProblem(p)}\n`);
    else io.stderr(`calendar: ${errorMessage(err)}\n`);
    return EXIT_USAGE;
  }
  const config = calendars[name];
  if (!config) {
    const known = Object.keys(calendars);
    const hint = nearestKey(name, known);
    io.stderr(`calendar: no calendar "${name}" in ${o.config}${hint ? ` (did you mean "${hint}"?)` : ''}; its calendars: ${known.length > 0 ? known.join(', ') : 'none'}\n`);
    return EXIT_FAILURE;
  }
  const view = calendarYear(name, config, year);
  io.stdout(format === 'json' ? `${JSON.stringify(view, null, 2)}\n` : calendarTable(view));
  return EXIT_OK;
}

/** The year as a table people read. */
export function calendarTable(v: CalendarYear): string {
  const out: string[] = [];
  const h = v.holidays;
  out.push(
    `Calendar ${v.name}, ${v.year}: ${h ? `holidays of ${h.country}${h.region ? ` (region ${h.region})` : ''}, counting the types ${h.types.join(', ')}` : 'no holidays'}; weekdays excluded: ${v.exclude_weekdays.length > 0 ? v.exclude_weekdays.join(', ') : 'none'}`,
  );
  if (v.non_business_days.length > 0) {
    const rows = [['DATE', 'DAY', 'NO FILE EXPECTED BECAUSE'], ...v.non_business_days.map((d) => [d.date, d.weekday, d.reasons.join('; ')])];
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
    out.push('', `${v.non_business_days.length} days without a file expected:`, ...rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')));
  }
  const notCounted = v.days.filter((d) => !d.counted);
  if (notCounted.length > 0) {
    out.push('', `Holidays of the library this calendar does not count (their type is not in holidays.types): files are expected on them:`);
    for (const d of notCounted) out.push(`  ${d.date} ${d.weekday}  ${d.name} (${d.type})`);
  }
  for (const d of v.days.filter((x) => x.note)) out.push('', `${d.date} is a correction of the holiday library: ${d.note}`);
  out.push('', `${v.business_days} days of ${v.year} expect files (not a counted holiday, an excluded weekday or an excluded date).`);
  return `${out.join('\n')}\n`;
}

export function registerCalendar(program: Command): void {
  const calendar = program.command('calendar').description('the business calendars of a config: which days expect no file');
  calendar
    .command('show <name>')
    .description("a calendar's year: its holidays (counted or not, with their type and source), excluded weekdays and dates")
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .option('--year <year>', 'the year to show (default: this year)')
    .option('--format <format>', 'table or json', 'table')
    .action(async (name: string, o: { config: string; year?: string; format?: string }) => {
      process.exitCode = await runCalendarShow(name, o, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), now: Date.now() });
    });
}
