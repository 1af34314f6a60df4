import Fastify from 'fastify';

/** The ceiling: Fastify parsing the same JSON bodies and answering 200, with no work at all. */
const app = Fastify({ bodyLimit: 20 * 1024 * 1024 });
app.post('/batch/', async (request) => ({
  status: 1,
  n: (request.body as { batch?: unknown[] }).batch?.length ?? 1,
}));
app.post('/capture/', async () => ({ status: 1 }));
// bench/decide's ceiling: a hello world.
app.get('/', async () => ({ hello: 'world' }));
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
