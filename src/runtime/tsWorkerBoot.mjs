// Loads a TypeScript worker entry: the main thread runs under tsx (`node --import tsx`, vitest),
// whose loader a worker thread does not inherit.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
