// Import-direction rules of the code base (issue #7), checked by `npm run lint:deps` (part of
// `npm test`). docs/ARCHITECTURE.md explains the layout these rules keep; `npm run graph:deps`
// redraws docs/architecture-deps.md from this file and the code.
//
// Paths are relative to the repository root. Tests (`test/`) and benchmarks (`bench/`) are not
// cruised: they may import anything they exercise.

/** The feature slices: everything outside `src/` that the kernel must not know about. */
const SLICES = '^(ingress|commands|projections|queries|processes)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'model-only-from-commands',
      comment:
        'Queries, projections and processes may import from commands/ only its published model ' +
        '(commands/<feature>/model/**: events, stream names, evolve, pure rules shared by both ' +
        'sides). Deciders, handlers and routes are the write side. Move what both sides need into ' +
        'the model folder of the feature.',
      severity: 'error',
      from: { path: '^(queries|projections|processes)/' },
      to: { path: '^commands/', pathNot: '^commands/[^/]+/model/' },
    },
    {
      name: 'flag-reads-not-capture',
      comment:
        '/decide and /flags (queries/decide/) and flag evaluation (projections/featureFlags/: the ' +
        'evaluator, its definitions cache, the evaluation service) are a read path: what they share ' +
        'with capture (body decoding, token resolution, GeoIP, request errors) is in ingress/, and ' +
        'they import nothing of commands/capture/, not even its model (issue #27).',
      severity: 'error',
      from: { path: '^(queries/decide|projections/featureFlags)/' },
      to: { path: '^commands/capture/' },
    },
    {
      name: 'ingress-knows-only-the-kernel',
      comment:
        'ingress/ is what both entry points stand on (capture writes, /decide reads): request ' +
        'decoding, token resolution, GeoIP, request errors. It imports the kernel (src/) and, for ' +
        "token resolution, the access reader's type; no command, query, other projection or process, " +
        'so neither side reaches the other through it.',
      severity: 'error',
      from: { path: '^ingress/' },
      to: {
        path: '^(commands|queries|projections|processes)/',
        pathNot: '^projections/access/accessReader\\.ts$',
      },
    },
    {
      name: 'commands-not-queries',
      comment:
        'The write side never imports the read side: a command reads facts through a projection ' +
        'reader (projections/<readModel>/<readModel>Reader.ts), not through a query module or view ' +
        '(route files: see write-routes-answer-with-own-views).',
      severity: 'error',
      from: { path: '^commands/', pathNot: 'Routes\\.ts$' },
      to: { path: '^queries/' },
    },
    {
      name: 'write-routes-answer-with-own-views',
      comment:
        'A write route answers with the object as the read side shows it (PostHog returns the flag ' +
        'after a PATCH), so a command route file may import the views and query functions of its ' +
        'own feature (queries/<same feature>/) and of no other; handlers and deciders never do.',
      severity: 'error',
      from: { path: '^commands/([^/]+)/[^/]+Routes\\.ts$' },
      to: { path: '^queries/', pathNot: '^queries/$1/' },
    },
    {
      name: 'projections-not-queries-or-processes',
      comment:
        'Projections (and their readers) are below queries and processes: they may not import ' +
        'queries/ or processes/. Put shared SQL helpers in projections/shared/.',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: '^(queries|processes)/' },
    },
    {
      name: 'src-only-roots-import-slices',
      comment:
        'The kernel (src/) knows the slices only in its composition roots: src/service.ts, ' +
        'src/routes.ts, src/bootstrap.ts and src/cli/**. Anything else in src/ that needs a ' +
        'slice gets it passed in as a dependency (e.g. the access reader for auth).',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: ['^src/(service|routes|bootstrap)\\.ts$', '^src/cli/'],
      },
      to: { path: SLICES },
    },
    {
      name: 'only-routes-use-http',
      comment:
        'Only route files (*Routes.ts) of a slice import the HTTP kit (src/http/**). Handlers, ' +
        'queries, readers and projections throw DomainFailure (src/core/errors.ts) and know ' +
        'nothing about HTTP, so the CLI and tests can call them too.',
      severity: 'error',
      from: { path: SLICES, pathNot: 'Routes\\.ts$' },
      to: { path: '^src/http/' },
    },
    {
      name: 'no-circular',
      comment:
        'No import cycles (type-only imports included): a cycle means two modules are one module ' +
        'in two files, or that a shared piece wants its own file.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // What is cruised; `lint:deps` passes `.` and this narrows it, so a slice folder that does
    // not exist yet (processes/) is no error.
    includeOnly: '^(src|ingress|commands|projections|queries|processes)/',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|\\.data|dist|coverage)/' },
    // Type-only imports count too: a query that imports a decider's types still depends on it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      // `npm run graph:deps` collapses to one box per folder two levels deep (see package.json);
      // readable mermaid text, since it is checked in.
      mermaid: { minify: false },
      text: { highlightFocused: true },
    },
  },
};
