import { readFileSync } from 'node:fs';

/** VmRSS and VmHWM of a live process, MB (Linux); undefined once it is gone. */
export function procMemory(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** User + system CPU time of a process so far, seconds (Linux /proc; clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  // Fields after the command name (which may hold spaces, hence from the last ')'): utime is 14th, stime 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
