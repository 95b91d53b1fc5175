/**
 * Holidays the holiday library (date-holidays) gets wrong, carried by this project until the library is fixed. Each
 * has a test that fails once the library has the day itself (test/sla/holiday-corrections.test.ts): then the
 * correction is dropped.
 */
export interface HolidayCorrection {
  country: string;
  /** The first year the holiday is kept (its law's). */
  fromYear: number;
  /** `MM-DD`. */
  monthDay: string;
  name: string;
  type: 'public';
  /** Why: the law, and what the library does instead. */
  reason: string;
}

export const HOLIDAY_CORRECTIONS: readonly HolidayCorrection[] = [
  {
    country: 'BR',
    fromYear: 2024,
    monthDay: '11-20',
    name: 'Dia Nacional de Zumbi e da Consciência Negra',
    type: 'public',
    reason:
      'national since Lei 14.759/2023; date-holidays 3.37 has it for BR alone but not with a region (BR with region SP, RJ ... leaves 20 November out)',
  },
];

/** The corrections of a country's year, as local dates (`YYYY-MM-DD`). */
export function correctionsOf(country: string, year: number): Array<HolidayCorrection & { date: string }> {
  return HOLIDAY_CORRECTIONS.filter((c) => c.country === country && year >= c.fromYear).map((c) => ({ ...c, date: `${year}-${c.monthDay}` }));
}
