import { parentPort, workerData } from 'node:worker_threads';

/**
 * A HogQL parser thread that fails as `workerData.data` says (projections/hogql/parser.ts'
 * replaceParserThread): `throw` cannot load, `hang` never says it is ready, `die` says it is
 * ready and then exits on its first parse.
 */
const how = (workerData as { data: 'throw' | 'hang' | 'die' }).data;
if (how === 'throw') throw new Error('the parser cannot load');
if (how === 'hang') setInterval(() => undefined, 1_000);
if (how === 'die') {
  parentPort?.postMessage({ id: -1 });
  parentPort?.on('message', () => process.exit(1));
}
