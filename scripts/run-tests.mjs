/**
 * `npm test`: the vitest suite, then the Salesforce record component's Jest suite (sfdx-lwc-jest), both always
 * run; the exit code is non-zero when either fails. Arguments go to vitest. Each runner writes its JSON report
 * under test-artifacts/, which .ci/run adds up into one closing line.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

mkdirSync('test-artifacts', { recursive: true });

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit', shell: false });
  if (result.error) {
    console.error(`${command}: ${result.error.message}`);
    return 1;
  }
  return result.status ?? 1;
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const vitest = run(npm, ['exec', '--', 'vitest', 'run', ...process.argv.slice(2)]);
const lwc = run(npm, ['run', 'test:lwc']);
process.exit(vitest !== 0 ? vitest : lwc);
