import { HogQLError } from './errors.ts';
import { identifier, jsonProperty, type TableRef, tableField } from './fields.ts';
import { TABLE_FUNCTIONS } from './functions.ts';
import type { Node } from './parser.ts';
import { type ExprHost, orderBy, printExpr, spanOf, windowSpec } from './printExpr.ts';
import { ASTERISK, isTableName, TABLES } from './schema.ts';
import { type SourceContext, tableSource } from './tables.ts';

export type PrintContext = SourceContext &
  Readonly<{
    /** the query text, for the WITH TOTALS the parser's JSON leaves out and for column names */
    text: string;
    values: Readonly<Record<string, unknown>>;
    /** the parsed `{filters}` expression, or undefined for `true` */
    filters: Node | undefined;
  }>;

/** Names in scope of one SELECT: its FROM's tables (by alias) and the CTEs above it. */
class Scope {
  readonly refs = new Map<string, TableRef>();
  readonly ctes = new Set<string>();
  constructor(readonly parent?: Scope) {}
  hasCte(name: string): boolean {
    return this.ctes.has(name) || (this.parent?.hasCte(name) ?? false);
  }
  lookup(alias: string): TableRef | undefined {
    return this.refs.get(alias) ?? this.parent?.lookup(alias);
  }
}

const MAX_SUBQUERIES = 100;

/** Prints a SelectQuery or SelectSetQuery (UNION ALL …) of HogQL as ClickHouse SQL. */
export class SelectPrinter {
  private subqueries = 0;
  constructor(private readonly ctx: PrintContext) {}

  print(node: Node, parent?: Scope): string {
    if (++this.subqueries > MAX_SUBQUERIES)
      throw new HogQLError(`A query may have at most ${MAX_SUBQUERIES} SELECTs`, spanOf(node));
    if (node.node === 'SelectSetQuery') {
      const parts = [this.print(node.initial_select_query, parent)];
      for (const s of node.subsequent_select_queries ?? []) {
        const op = String(s.set_operator ?? 'UNION ALL').toUpperCase();
        if (
          ![
            'UNION ALL',
            'UNION DISTINCT',
            'INTERSECT',
            'EXCEPT',
            'INTERSECT DISTINCT',
            'EXCEPT DISTINCT',
          ].includes(op)
        )
          throw new HogQLError(`Unsupported set operator: ${op}`, spanOf(s));
        parts.push(op, this.wrapped(s.select_query, parent));
      }
      return parts.join(' ');
    }
    if (node.node !== 'SelectQuery')
      throw new HogQLError(`Expected a SELECT, got ${node.node}`, spanOf(node));
    return this.select(node, new Scope(parent));
  }

  /** A union arm with its own ORDER BY/LIMIT must keep them: in parentheses. */
  private wrapped(node: Node, parent?: Scope): string {
    const sql = this.print(node, parent);
    return node.node === 'SelectQuery' && (node.limit || node.order_by) ? `(${sql})` : sql;
  }

  private select(q: Node, scope: Scope): string {
    const ctes: string[] = [];
    for (const cte of q.ctes ?? []) {
      if (cte.cte_type === 'column') {
        // WITH <expression> AS name: a named constant of the SELECT
        ctes.push(`${printExpr(this.host(scope), cte.expr)} AS ${identifier(cte.name)}`);
        continue;
      }
      ctes.push(`${identifier(cte.name)} AS (${this.print(cte.expr, scope)})`);
      scope.ctes.add(String(cte.name));
    }
    // tables first (their aliases are what fields resolve to), their SQL last (it depends on
    // which lazy fields the rest used)
    const joins: Node[] = [];
    for (let j: Node | null = q.select_from ?? null; j; j = j.next_join ?? null) joins.push(j);
    const refs = joins.map((j, i) => this.register(j, i, scope));
    const host = this.host(scope);
    const expr = (n: Node) => printExpr(host, n);
    const list = (ns: readonly Node[] | null | undefined) => (ns ?? []).map(expr).join(', ');
    const constraints = joins.map((j) => {
      const c = j.constraint;
      if (!c) return '';
      if (c.constraint_type === 'USING') {
        const using = c.expr?.node === 'Tuple' ? c.expr.exprs : [c.expr];
        return ` USING (${using.map((u: Node) => identifier(String(u.chain?.at(-1) ?? u.alias))).join(', ')})`;
      }
      return ` ON ${expr(c.expr)}`;
    });
    const named = new Set<string>(
      (q.select ?? []).filter((n: Node) => n.node === 'Alias').map((n: Node) => String(n.alias)),
    );
    const items = (q.select ?? []).flatMap((n: Node) => this.selectItem(n, scope, expr, named));
    const parts = [`SELECT ${q.distinct ? 'DISTINCT ' : ''}${items.join(', ')}`];
    const tail: string[] = [];
    if (q.array_join_list?.length)
      tail.push(
        `${q.array_join_op === 'LEFT ARRAY JOIN' ? 'LEFT ARRAY JOIN' : 'ARRAY JOIN'} ${list(q.array_join_list)}`,
      );
    if (q.prewhere) tail.push(`PREWHERE ${expr(q.prewhere)}`);
    if (q.where) tail.push(`WHERE ${expr(q.where)}`);
    if (q.group_by?.length) tail.push(`GROUP BY ${list(q.group_by)}${this.groupModifier(q)}`);
    if (q.having) tail.push(`HAVING ${expr(q.having)}`);
    if (q.window_exprs && Object.keys(q.window_exprs).length)
      tail.push(
        `WINDOW ${Object.entries(q.window_exprs as Record<string, Node>)
          .map(([name, w]) => `${identifier(name)} AS (${windowSpec(expr, w)})`)
          .join(', ')}`,
      );
    if (q.order_by?.length) tail.push(`ORDER BY ${orderBy(expr, q.order_by)}`);
    if (q.limit_by) {
      const offset = q.limit_by.offset_value ? ` OFFSET ${expr(q.limit_by.offset_value)}` : '';
      tail.push(`LIMIT ${expr(q.limit_by.n)}${offset} BY ${list(q.limit_by.exprs)}`);
    }
    if (q.limit) tail.push(`LIMIT ${expr(q.limit)}${q.limit_with_ties ? ' WITH TIES' : ''}`);
    if (q.offset) tail.push(`OFFSET ${expr(q.offset)}`);
    if (joins.length) {
      const from = joins.map((j, i) => {
        const ref = refs[i]!;
        const source = this.source(j, ref, scope);
        const type = i === 0 ? 'FROM' : String(j.join_type ?? 'JOIN').toUpperCase();
        if (
          !/^(GLOBAL )?((LEFT|RIGHT|FULL|INNER|CROSS)( OUTER| ANY| ALL| SEMI| ANTI| ASOF)? |(ANY|ALL|ASOF|SEMI|ANTI) (LEFT |RIGHT |INNER )?)?JOIN$|^FROM$|^,$/.test(
            type,
          )
        )
          throw new HogQLError(`Unsupported join: ${type}`, spanOf(j));
        return `${type} ${source} AS ${identifier(ref.alias)}${constraints[i]}`;
      });
      parts.push(from.join(' '));
    }
    return [ctes.length ? `WITH ${ctes.join(', ')}` : '', ...parts, ...tail]
      .filter(Boolean)
      .join(' ');
  }

  /** GROUP BY … WITH TOTALS / ROLLUP / CUBE: the parser's JSON drops them; read from the text. */
  private groupModifier(q: Node): string {
    const from = q.group_by.at(-1)?.end?.offset;
    if (from === undefined) return '';
    const next = [
      q.having,
      q.window_exprs && Object.values(q.window_exprs)[0],
      q.order_by?.[0],
      q.limit_by,
      q.limit,
      q.offset,
    ]
      .map((n: Node | undefined) => n?.start?.offset)
      .filter((o): o is number => typeof o === 'number' && o >= from);
    const to = Math.min(q.end?.offset ?? this.ctx.text.length, ...next);
    const between = this.ctx.text.slice(from, to);
    const modifiers: string[] = [];
    for (const m of between.matchAll(/\bwith\s+(totals|rollup|cube)\b/gi))
      modifiers.push(`WITH ${m[1]!.toUpperCase()}`);
    return modifiers.length ? ` ${modifiers.join(' ')}` : '';
  }

  private register(j: Node, index: number, scope: Scope): TableRef {
    const t = j.table;
    const chain: string[] | undefined = t?.node === 'Field' ? t.chain : undefined;
    const name = chain?.length === 1 ? String(chain[0]) : undefined;
    const alias = j.alias ? String(j.alias) : (name ?? `__sq${index}`);
    const ref: TableRef =
      name && !j.table_args && !scope.hasCte(name) && isTableName(name)
        ? {
            kind: 'table',
            alias,
            table: name,
            needs: { personId: false, person: false, pdi: false },
          }
        : { kind: 'other', alias };
    if (String(j.alias ?? '').startsWith('__'))
      throw new HogQLError(`Reserved alias: ${alias}`, spanOf(j));
    scope.refs.set(alias, ref);
    return ref;
  }

  private source(j: Node, ref: TableRef, scope: Scope): string {
    if (j.sample) throw new HogQLError('SAMPLE is not supported', spanOf(j.sample));
    const t: Node = j.table;
    if (ref.kind === 'table') return `(${tableSource(this.ctx, ref.table, ref.needs)})`;
    if (t.node === 'SelectQuery' || t.node === 'SelectSetQuery') return `(${this.print(t, scope)})`;
    const name = t.node === 'Field' && t.chain?.length === 1 ? String(t.chain[0]) : undefined;
    if (name && !j.table_args && scope.hasCte(name)) return identifier(name);
    if (name && j.table_args && TABLE_FUNCTIONS.has(name)) {
      const args = j.table_args as Node[];
      if (!args.every((a) => a.node === 'Constant' && typeof a.value === 'number'))
        throw new HogQLError(`${name}() takes numbers only`, spanOf(j));
      return `${name}(${args.map((a) => String(a.value)).join(', ')})`;
    }
    const shown = t.node === 'Field' ? (t.chain ?? []).join('.') : t.node;
    throw new HogQLError(
      j.table_args
        ? `Unknown table function: ${shown}`
        : `Unknown table: ${shown}. Tables: ${Object.keys(TABLES).join(', ')}`,
      spanOf(t),
    );
  }

  /** `*` over a HogQL table expands to PostHog's field list; other items print as they are. */
  private selectItem(
    n: Node,
    scope: Scope,
    expr: (n: Node) => string,
    named: Set<string>,
  ): string[] {
    if (n.node === 'Field' && n.chain?.at(-1) === '*') {
      const refs =
        n.chain.length === 2 ? [scope.refs.get(String(n.chain[0]))] : [...scope.refs.values()];
      if (refs.some((r) => !r)) throw new HogQLError(`Unknown table: ${n.chain[0]}`, spanOf(n));
      if (refs.length === 1 && refs[0]!.kind === 'table') {
        const ref = refs[0]!;
        return ASTERISK[ref.table].map((f) => tableField(ref, [f], spanOf(n)));
      }
      return [n.chain.length === 2 ? `${identifier(String(n.chain[0]))}.*` : '*'];
    }
    // a field's column is named after it, as PostHog names it (`properties.$browser` → `$browser`,
    // `person_id` → `person_id`, not the scoped source's column), unless another item has the name
    if (n.node === 'Field' && n.chain?.length > 0) {
      const sql = expr(n);
      const last = String(n.chain.at(-1));
      if (sql === identifier(last) || sql.endsWith(`.${identifier(last)}`)) return [sql];
      if (named.has(last)) {
        // the name is taken (`person_id, pdi.person_id`): a virtual field keeps its HogQL path
        // as its name rather than showing the scoped source's internal column (`__person_id`)
        const whole = n.chain.map(String).join('.');
        if (!/(^|\.)__\w+$/.test(sql) || named.has(whole)) return [sql];
        named.add(whole);
        return [`${sql} AS ${identifier(whole)}`];
      }
      named.add(last);
      return [`${sql} AS ${identifier(last)}`];
    }
    return [expr(n)];
  }

  private host(scope: Scope): ExprHost {
    return {
      field: (node, lambdaArgs) => this.field(node, scope, lambdaArgs),
      subquery: (node) => this.print(node, scope),
      inTarget: (node, lambdaArgs) => {
        const name = node.chain?.length === 1 ? String(node.chain[0]) : undefined;
        return name && !lambdaArgs.has(name) && scope.hasCte(name)
          ? `(SELECT * FROM ${identifier(name)})`
          : undefined;
      },
      placeholder: (node, lambdaArgs, depth) => {
        const name =
          node.expr?.node === 'Field' && node.expr.chain?.length === 1
            ? String(node.expr.chain[0])
            : undefined;
        if (name === 'filters')
          return this.ctx.filters
            ? printExpr(this.host(scope), this.ctx.filters, lambdaArgs, depth)
            : 'true';
        if (name === undefined || !Object.hasOwn(this.ctx.values, name))
          throw new HogQLError(`Placeholder {${name ?? '…'}} has no value`, spanOf(node));
        return printExpr(
          this.host(scope),
          { node: 'Constant', value: this.ctx.values[name] },
          lambdaArgs,
          depth,
        );
      },
    };
  }

  private field(node: Node, scope: Scope, lambdaArgs: ReadonlySet<string>): string {
    const chain = (node.chain ?? []).map(String) as string[];
    const span = spanOf(node);
    const [first, ...rest] = chain;
    if (first === undefined) throw new HogQLError('Empty field', span);
    if (chain.some((c) => c.startsWith('__')))
      throw new HogQLError(`Field not found: ${chain.join('.')}`, span);
    if (lambdaArgs.has(first)) return chain.map(identifier).join('.');
    const ref = scope.lookup(first);
    if (ref && rest.length > 0) {
      if (ref.kind === 'table') return tableField(ref, rest, span);
      // a subquery's or CTE's `properties` column is JSON text, as on the tables it came from
      if (rest[0] === 'properties' && rest.length > 1)
        return jsonProperty(`${identifier(first)}.properties`, rest.slice(1));
      return chain.map(identifier).join('.');
    }
    if (chain.length === 1 && first === '*') return '*';
    // an unqualified field: the first HogQL table of this SELECT that has it (of the nearest
    // enclosing SELECT with a FROM, for a subquery without one); never an outer table when this
    // SELECT reads a subquery or CTE (ClickHouse does not correlate IN subqueries)
    let s: Scope | undefined = scope;
    while (s && s.refs.size === 0) s = s.parent;
    for (const r of s?.refs.values() ?? [])
      if (r.kind === 'table' && Object.hasOwn(TABLES[r.table], first))
        return tableField(r, chain, span);
    if (first === 'properties' && rest.length > 0) return jsonProperty('properties', rest);
    // a column of a subquery or CTE, or an alias of the SELECT: ClickHouse resolves it (or says 400)
    return chain.map(identifier).join('.');
  }
}
