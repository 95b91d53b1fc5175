/**
 * A bench child: `count` simulated services in this process, each on its own port with its own seed, generating
 * live history at `ratePerMinute`. The hundred-sources line runs several of these, so that the services' work is
 * in processes of their own, not in the benchmark's or the replicas'. Prints the services' URLs as a JSON array.
 */
import { startSimulator, type RunningSimulator } from '../src/simulator/start-simulator.js';
import { exitWithParent } from './exit-with-parent.js';

const [count, firstSeed, ratePerMinute] = process.argv.slice(2).map(Number);
const sims: RunningSimulator[] = [];
for (let i = 0; i < (count ?? 1); i++) {
  sims.push(await startSimulator({ seed: (firstSeed ?? 1) + i, scenario: 'steady', ratePerMinute: ratePerMinute ?? 20 }));
}
process.stdout.write(`${JSON.stringify(sims.map((s) => s.url))}\n`);
const stop = (): Promise<unknown> => Promise.all(sims.map((s) => s.close()));
process.on('SIGTERM', () => void stop().finally(() => process.exit(0)));
exitWithParent(stop);
