import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The rules of `.dependency-cruiser.cjs` (what `npm run lint:deps` enforces), applied to a small
 * tree of probe files laid out like the repository (queries/, commands/<feature>/model/, src/http/
 * …) in a temporary directory of its own: each probe makes one import, and the rule it breaks, if
 * any, is what the cruise reports. Nothing is written into the source tree, so the test can run
 * beside any other.
 */

const CONFIG = fileURLToPath(new URL('../../.dependency-cruiser.cjs', import.meta.url));

/** probe file → the file it imports (relative to the probe's root). */
const PROBES: Record<string, string> = {
  // model-only-from-commands
  'queries/featureFlags/usesDecider.ts': 'commands/featureFlags/featureFlagDecider.ts',
  'queries/persons/usesModel.ts': 'commands/persons/model/personRef.ts',
  'projections/access/usesEvents.ts': 'commands/access/accessEvents.ts',
  'projections/persons/usesModel.ts': 'commands/persons/model/personRef.ts',
  'processes/eventDeletion/usesDecider.ts': 'commands/persons/personDecider.ts',
  'processes/eventDeletion/usesModel.ts': 'commands/persons/model/personRef.ts',
  'queries/decide/usesHashKeyWrite.ts': 'commands/featureFlags/setHashKeyOverrides.ts',
  'projections/featureFlags/evaluation/usesFlagModel.ts':
    'commands/featureFlags/model/flagFilters.ts',
  // flag-reads-not-capture
  'queries/decide/usesCaptureModel.ts': 'commands/capture/model/eventCaptured.ts',
  'projections/featureFlags/evaluation/usesCapture.ts': 'commands/capture/parseCaptureBatch.ts',
  'projections/featureFlags/flagDefinitions.ts': 'commands/capture/model/elementsChain.ts',
  'queries/decide/usesIngress.ts': 'ingress/decodeRequestBody.ts',
  // ingress-knows-only-the-kernel
  'ingress/usesCapture.ts': 'commands/capture/captureEvents.ts',
  'ingress/usesCommandModel.ts': 'commands/persons/model/personRef.ts',
  'ingress/usesQuery.ts': 'queries/persons/personView.ts',
  'ingress/usesProjection.ts': 'projections/persons/personsReader.ts',
  'ingress/resolveProject.ts': 'projections/access/accessReader.ts',
  'ingress/geoip.ts': 'src/core/errors.ts',
  // commands-not-queries
  'commands/persons/usesQuery.ts': 'queries/persons/personView.ts',
  'commands/persons/usesReader.ts': 'projections/persons/personsReader.ts',
  // write-routes-answer-with-own-views
  'commands/persons/personRoutes.ts': 'queries/persons/personView.ts',
  'commands/access/accessRoutes.ts': 'queries/persons/personView.ts',
  // projections-not-queries-or-processes
  'projections/events/usesQuery.ts': 'queries/persons/personView.ts',
  'projections/events/usesProcess.ts': 'processes/eventDeletion/eventDeletionJob.ts',
  'projections/events/usesShared.ts': 'projections/shared/propertyFilterTree.ts',
  // src-only-roots-import-slices
  'src/http/usesReader.ts': 'projections/access/accessReader.ts',
  'src/config.ts': 'processes/eventDeletion/eventDeletionScheduler.ts',
  'src/routes.ts': 'queries/persons/personQueryRoutes.ts',
  'src/service.ts': 'commands/capture/captureEvents.ts',
  'src/bootstrap.ts': 'commands/access/createProject.ts',
  'src/cli/main.ts': 'processes/eventDeletion/eventDeletionJob.ts',
  // only-routes-use-http
  'queries/persons/personQueries.ts': 'src/http/apiError.ts',
  'commands/featureFlags/createFeatureFlag.ts': 'src/http/apiError.ts',
  'queries/persons/personQueryRoutes.ts': 'src/http/apiError.ts',
  'commands/featureFlags/featureFlagRoutes.ts': 'src/http/apiScope.ts',
  // no-circular: a → b → a
  'projections/shared/cycleA.ts': 'projections/shared/cycleB.ts',
  'projections/shared/cycleB.ts': 'projections/shared/cycleA.ts',
  // tests are not constrained
  'test/queries/usesDecider.test.ts': 'commands/featureFlags/featureFlagDecider.ts',
};

let root = '';
let result: ICruiseResult;

/** Names of the rules the import of `from` breaks (empty: the import is allowed). */
const brokenBy = (from: string): string[] =>
  result.summary.violations
    .filter((v) => v.from === from)
    .map((v) => v.rule.name)
    .sort();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hogstream-dependency-rules-'));
  const files = new Set([...Object.keys(PROBES), ...Object.values(PROBES)]);
  for (const file of files) {
    const target = PROBES[file];
    const path = join(root, file);
    mkdirSync(dirname(path), { recursive: true });
    const specifier = target ? relativeSpecifier(file, target) : undefined;
    writeFileSync(
      path,
      specifier
        ? `import { probe as imported } from '${specifier}';\nexport const probe = imported;\n`
        : 'export const probe = 1;\n',
    );
  }
  // The repository's own rules and options; only where to cruise changes. `includeOnly` is
  // dropped so the test/ probe is cruised too (`lint:deps` does not cruise test/ at all), and
  // the repository's tsconfig is not the probe tree's.
  const {
    includeOnly: _includeOnly,
    tsConfig: _tsConfig,
    ...options
  } = await extractDepcruiseOptions(CONFIG);
  const cruiseOptions: ICruiseOptions = {
    ...options,
    baseDir: root,
    validate: true,
    outputType: 'json',
  };
  const { output } = await cruise(['.'], cruiseOptions);
  result = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
  // Every probe import resolved to its file, so no rule passes for want of a resolved path.
  const unresolved = result.modules.flatMap((m) =>
    m.dependencies.filter((d) => d.couldNotResolve).map((d) => `${m.source} → ${d.module}`),
  );
  expect(unresolved).toEqual([]);
}, 60_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('dependency rules (.dependency-cruiser.cjs)', () => {
  it('cruised every probe', () => {
    expect(result.summary.totalCruised).toBe(
      new Set([...Object.keys(PROBES), ...Object.values(PROBES)]).size,
    );
  });

  it('model-only-from-commands: refuses a query importing a decider, accepts the model', () => {
    expect(brokenBy('queries/featureFlags/usesDecider.ts')).toEqual(['model-only-from-commands']);
    expect(brokenBy('queries/persons/usesModel.ts')).toEqual([]);
  });

  it('model-only-from-commands: holds for projections and processes too', () => {
    expect(brokenBy('projections/access/usesEvents.ts')).toEqual(['model-only-from-commands']);
    expect(brokenBy('projections/persons/usesModel.ts')).toEqual([]);
    expect(brokenBy('processes/eventDeletion/usesDecider.ts')).toEqual([
      'model-only-from-commands',
    ]);
    expect(brokenBy('processes/eventDeletion/usesModel.ts')).toEqual([]);
  });

  it('model-only-from-commands: /decide and the flag evaluator on the read side see only models', () => {
    expect(brokenBy('queries/decide/usesHashKeyWrite.ts')).toEqual(['model-only-from-commands']);
    expect(brokenBy('projections/featureFlags/evaluation/usesFlagModel.ts')).toEqual([]);
  });

  it('flag-reads-not-capture: /decide and flag evaluation import nothing of capture, not even its model', () => {
    expect(brokenBy('queries/decide/usesCaptureModel.ts')).toEqual(['flag-reads-not-capture']);
    expect(brokenBy('projections/featureFlags/evaluation/usesCapture.ts')).toEqual([
      'flag-reads-not-capture',
      'model-only-from-commands',
    ]);
    expect(brokenBy('projections/featureFlags/flagDefinitions.ts')).toEqual([
      'flag-reads-not-capture',
    ]);
    expect(brokenBy('queries/decide/usesIngress.ts')).toEqual([]);
  });

  it('ingress-knows-only-the-kernel: no command, query, projection or process but the access reader', () => {
    expect(brokenBy('ingress/usesCapture.ts')).toEqual(['ingress-knows-only-the-kernel']);
    expect(brokenBy('ingress/usesCommandModel.ts')).toEqual(['ingress-knows-only-the-kernel']);
    expect(brokenBy('ingress/usesQuery.ts')).toEqual(['ingress-knows-only-the-kernel']);
    expect(brokenBy('ingress/usesProjection.ts')).toEqual(['ingress-knows-only-the-kernel']);
    expect(brokenBy('ingress/resolveProject.ts')).toEqual([]);
    expect(brokenBy('ingress/geoip.ts')).toEqual([]);
  });

  it('commands-not-queries: a command reads through a projection reader, not a query', () => {
    expect(brokenBy('commands/persons/usesQuery.ts')).toEqual(['commands-not-queries']);
    expect(brokenBy('commands/persons/usesReader.ts')).toEqual([]);
  });

  it("write-routes-answer-with-own-views: a command route may import its own feature's views only", () => {
    expect(brokenBy('commands/persons/personRoutes.ts')).toEqual([]);
    expect(brokenBy('commands/access/accessRoutes.ts')).toEqual([
      'write-routes-answer-with-own-views',
    ]);
  });

  it('projections-not-queries-or-processes', () => {
    expect(brokenBy('projections/events/usesQuery.ts')).toEqual([
      'projections-not-queries-or-processes',
    ]);
    expect(brokenBy('projections/events/usesProcess.ts')).toEqual([
      'projections-not-queries-or-processes',
    ]);
    expect(brokenBy('projections/events/usesShared.ts')).toEqual([]);
  });

  it('src-only-roots-import-slices: only service, routes, bootstrap and cli/ know the slices', () => {
    expect(brokenBy('src/http/usesReader.ts')).toEqual(['src-only-roots-import-slices']);
    expect(brokenBy('src/config.ts')).toEqual(['src-only-roots-import-slices']);
    expect(brokenBy('src/routes.ts')).toEqual([]);
    expect(brokenBy('src/service.ts')).toEqual([]);
    expect(brokenBy('src/bootstrap.ts')).toEqual([]);
    expect(brokenBy('src/cli/main.ts')).toEqual([]);
  });

  it('only-routes-use-http: only *Routes.ts files of a slice import src/http', () => {
    expect(brokenBy('queries/persons/personQueries.ts')).toEqual(['only-routes-use-http']);
    expect(brokenBy('commands/featureFlags/createFeatureFlag.ts')).toEqual([
      'only-routes-use-http',
    ]);
    expect(brokenBy('queries/persons/personQueryRoutes.ts')).toEqual([]);
    expect(brokenBy('commands/featureFlags/featureFlagRoutes.ts')).toEqual([]);
  });

  it('no-circular: reports the cycle once, with both modules in it', () => {
    const cycles = result.summary.violations.filter((v) => v.rule.name === 'no-circular');
    expect(cycles.map((v) => (v.cycle ?? []).map((step) => step.name).sort())).toEqual([
      ['projections/shared/cycleA.ts', 'projections/shared/cycleB.ts'],
    ]);
  });

  it('does not constrain tests', () => {
    expect(brokenBy('test/queries/usesDecider.test.ts')).toEqual([]);
  });

  it('fails the run on a violation (what makes `npm run lint:deps` exit non-zero)', () => {
    expect(result.summary.error).toBeGreaterThan(0);
    expect(result.summary.violations.every((v) => v.rule.severity === 'error')).toBe(true);
  });
});

describe('lint:deps on the repository', () => {
  // A rule only matches an import it resolved to a path: an import the configuration cannot
  // resolve would pass every rule unseen. This cruises the real tree (read-only) with the real
  // options and rules and asserts that every import between the cruised folders resolved.
  it('resolves every import of src, ingress, commands, projections, queries and processes', async () => {
    const options = await extractDepcruiseOptions(CONFIG);
    const { output } = await cruise(['.'], {
      ...options,
      baseDir: fileURLToPath(new URL('../..', import.meta.url)),
      validate: false,
      outputType: 'json',
    });
    const graph = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
    expect(graph.summary.totalCruised).toBeGreaterThan(50);
    const unresolved = graph.modules.flatMap((m) =>
      m.dependencies.filter((d) => d.couldNotResolve).map((d) => `${m.source} → ${d.module}`),
    );
    expect(unresolved).toEqual([]);
  }, 60_000);
});

/** `./x.ts` / `../../y/z.ts` from the probe `from` to `to`, both relative to the probe root. */
function relativeSpecifier(from: string, to: string): string {
  const fromDir = dirname(from).split('/');
  const toParts = to.split('/');
  let common = 0;
  while (common < fromDir.length && fromDir[common] === toParts[common]) common++;
  const up = fromDir.length - common;
  const rest = toParts.slice(common).join('/');
  return up === 0 ? `./${rest}` : `${'../'.repeat(up)}${rest}`;
}
