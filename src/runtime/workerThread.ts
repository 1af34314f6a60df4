import { Worker } from 'node:worker_threads';

/**
 * A worker thread running `entry` (a module URL) with `data` as its `workerData.data`. A
 * TypeScript entry (the default runtime, through tsx) goes through a small JavaScript boot file
 * that registers tsx in the worker first; compiled JavaScript runs directly.
 */
export function startWorker(entry: URL, data: unknown): Worker {
  if (entry.pathname.endsWith('.ts'))
    return new Worker(new URL('./tsWorkerBoot.mjs', import.meta.url), {
      workerData: { entry: entry.href, data },
    });
  return new Worker(entry, { workerData: { entry: entry.href, data } });
}
