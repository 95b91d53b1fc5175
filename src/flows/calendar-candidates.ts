import { BusinessCalendar, type CalendarConfig } from '../sla/business-calendar.js';
import type { CalendarCandidate } from './flow-schedule.js';

/** The config's business calendars as the schedule learner asks them (which days each excludes). */
export function calendarCandidates(calendars: Readonly<Record<string, CalendarConfig>>): CalendarCandidate[] {
  return Object.entries(calendars).map(([name, c]) => {
    const calendar = new BusinessCalendar(c);
    return { name, excludes: (day) => calendar.excludes(day), excludedWeekdays: calendar.excluded.weekdays };
  });
}
