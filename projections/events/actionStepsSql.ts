import type { ActionStep, StepMatching } from '../../commands/actions/model/action.ts';
import { SelectorError, selectorChainRegex } from '../../commands/actions/model/selector.ts';
import { escapeLike, FilterError } from '../shared/propertyFilterTree.ts';
import { compilePropertyFilters } from './propertyFilters.ts';
import { type Params, propertySql } from './sqlParams.ts';

/**
 * A step as compiled: its person property filters already resolved in Postgres to sets of
 * distinct ids (queries/actions/actionStepPersons.ts), each restricting `distinct_id`.
 */
export type CompiledActionStep = ActionStep & {
  personIdSets?: readonly Readonly<{ ids: readonly string[]; negated: boolean }>[];
};

/**
 * An action's steps as one SQL condition over `events`, with PostHog's meaning
 * (posthog/hogql/property.py `action_to_expr`): steps OR-ed, a step's conditions AND-ed; no steps,
 * or a step with no condition, matches every event. Element conditions (selector, tag, text, href)
 * apply only to `$autocapture` steps; text and href compare `text="…"` / `href="…"` of any element
 * of the chain: exact (the default), contains (any case) or regex; the URL is `$current_url`:
 * contains (the default, case-sensitive, `%` and `_` taken literally), exact or regex.
 */
export function compileActionSteps(
  steps: readonly CompiledActionStep[],
  params: Params,
  now: Date,
): string {
  if (steps.length === 0) return '1';
  const ors = steps.map((step, i) => {
    try {
      const ands = stepConditions(step, params, now);
      return ands.length === 0 ? '1' : ands.length === 1 ? ands[0]! : `and(${ands.join(', ')})`;
    } catch (error) {
      if (error instanceof FilterError || error instanceof SelectorError)
        throw new FilterError(`action step ${i + 1}: ${error.message}`);
      throw error;
    }
  });
  return ors.length === 1 ? ors[0]! : `or(${ors.join(', ')})`;
}

const esc = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
const chainMatch = (regex: string, params: Params) =>
  `match(elements_chain, ${params.string(regex)})`;

/** `key="…"` of an element in the chain (PostHog's element_chain_key_filter). */
function elementKey(key: string, value: string, how: StepMatching | null, params: Params) {
  const quoted = value.replace(/"/g, '\\"');
  if (how === 'regex') return chainMatch(`(${key}="${quoted}")`, params);
  if (how === 'contains') return chainMatch(`(?i)(${key}="[^"]*${esc(quoted)}[^"]*")`, params);
  return chainMatch(`(${key}="${esc(quoted)}")`, params);
}

function stepConditions(step: CompiledActionStep, params: Params, now: Date): string[] {
  const out: string[] = [];
  if (step.event) out.push(`event = ${params.string(step.event)}`);
  if (step.event === '$autocapture') {
    if (step.selector) out.push(chainMatch(selectorChainRegex(step.selector), params));
    if (step.tag_name !== null)
      out.push(chainMatch(`(^|;)${esc(step.tag_name)}(\\.|$|;|:)`, params));
    if (step.href !== null) out.push(elementKey('href', step.href, step.href_matching, params));
    if (step.text !== null) out.push(elementKey('text', step.text, step.text_matching, params));
  }
  if (step.url) {
    const url = propertySql(['$current_url'], params);
    if (step.url_matching === 'exact') out.push(`ifNull(${url} = ${params.string(step.url)}, 0)`);
    else if (step.url_matching === 'regex')
      out.push(`ifNull(match(${url}, ${params.string(step.url)}), 0)`);
    else out.push(`ifNull(like(${url}, ${params.string(`%${escapeLike(step.url)}%`)}), 0)`);
  }
  const properties = compilePropertyFilters(step.properties, params, now);
  if (properties) out.push(properties);
  for (const set of step.personIdSets ?? []) {
    const has = `has(${params.strings(set.ids)}, distinct_id)`;
    out.push(set.negated ? `not(${has})` : has);
  }
  return out;
}
