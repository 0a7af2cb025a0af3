// CPU and memory of a process and everything it started, read from Linux's /proc: what the app costs, children
// included (a shell, a cluster's workers), without a dependency.
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/** @param {string} name @param {number} fallback */
function sysconf(name, fallback) {
  try {
    return Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim()) || fallback;
  } catch {
    return fallback;
  }
}

const TICKS = sysconf('CLK_TCK', 100);
const PAGE = sysconf('PAGESIZE', 4096);

/** Whether this system has the /proc that sampling reads. */
export const procAvailable = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/**
 * One process's parent, CPU seconds (its own and its waited-for children's) and resident bytes; null once gone.
 * @param {number} pid @returns {{ ppid: number, cpu: number, rss: number }|null}
 */
function readProcess(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
    return { ppid: Number(fields[1]), cpu: (utime + stime + cutime + cstime) / TICKS, rss: Number(fields[21]) * PAGE };
  } catch {
    return null;
  }
}

/**
 * The process tree under `root`, summed: CPU seconds used so far and bytes resident now.
 * @param {number} root @returns {{ cpu: number, rss: number }}
 */
export function sampleTree(root) {
  /** @type {Map<number, { ppid: number, cpu: number, rss: number }>} */
  const all = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProcess(Number(name));
    if (p) all.set(Number(name), p);
  }
  let cpu = 0;
  let rss = 0;
  const queue = [root];
  for (const pid of queue) {
    const p = all.get(pid);
    if (!p) continue;
    cpu += p.cpu;
    rss += p.rss;
    for (const [child, c] of all) if (c.ppid === pid) queue.push(child);
  }
  return { cpu, rss };
}
