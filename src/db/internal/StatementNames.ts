/**
 * Which of the engine's statements run prepared (named) on their connection: every statement the
 * pool sees with parameters, from its second run, under a name of its own (`nameOf`). PostgreSQL
 * then parses and plans its text once per connection and each later run only binds and executes
 * it; on PGlite, where a plan is made in WASM on its one thread, that is about half of a simple
 * statement's cost (docs/decisions.md, "Every repeated statement runs prepared").
 *
 * Invariants:
 * - A name always goes with one text (`cs_<n>`, numbered in the order texts were named), so a
 *   connection never meets a name it parsed for another text.
 * - Bounded: at most `maxNames` texts are ever named (then the rest run unnamed, as before), and
 *   at most `maxCounted` texts not yet named are counted (then the counts start again), so
 *   statements whose text varies with their input (an `IN` list's length, a bulk insert's rows)
 *   cost a bounded map, and the hot statements, which repeat first, are named before the bound.
 * - A statement without parameters is never named: it may be several statements in one text (the
 *   simple protocol's), which a prepared statement cannot be.
 */

/** Texts named at most, per pool (each a prepared statement on each connection that runs it). */
export const statementNamesMax = 512
/** Texts counted at most before they are named (their counts start again past it). */
export const statementsCountedMax = 4096
/** Runs of a text before it is named: a text run once (a migration, a one-off read) stays unnamed. */
export const runsBeforeNamed = 2

export class StatementNames {
  private readonly names = new Map<string, string>()
  private readonly counts = new Map<string, number>()

  constructor(
    private readonly maxNames: number = statementNamesMax,
    private readonly maxCounted: number = statementsCountedMax
  ) {}

  /** The name `text` runs under now, or undefined: run it unnamed. Counts this run. */
  nameOf(text: string, parameters: number): string | undefined {
    if (parameters === 0) return undefined
    const named = this.names.get(text)
    if (named !== undefined) return named
    if (this.names.size >= this.maxNames) return undefined
    const runs = (this.counts.get(text) ?? 0) + 1
    if (runs < runsBeforeNamed) {
      if (this.counts.size >= this.maxCounted) this.counts.clear()
      this.counts.set(text, runs)
      return undefined
    }
    this.counts.delete(text)
    const name = `cs_${this.names.size + 1}`
    this.names.set(text, name)
    return name
  }

  /** How many texts are named (tests, stats). */
  size(): number {
    return this.names.size
  }
}
