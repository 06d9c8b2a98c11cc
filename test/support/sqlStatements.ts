/**
 * The SQL statements an effect runs, in order, by their text: the effect runs under Effect's
 * current tracer wrapped so that every `sql.execute` span (`@effect/sql` opens one per statement
 * and sets its text as `db.query.text`) records that text, as `bench/spanCounter.mjs` counts them
 * in a running engine. Only the effect's own fibers are counted (the tracer is fiber-local).
 */
import { Effect, type Exit, Tracer } from "effect"

export interface Counted<A, E> {
  readonly exit: Exit.Exit<A, E>
  /** Each statement's text, whitespace collapsed. */
  readonly statements: ReadonlyArray<string>
}

export const withStatementTexts = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Counted<A, E>, never, R> =>
  Effect.gen(function* () {
    const base = yield* Effect.tracer
    const statements: Array<string> = []
    const counting = Tracer.make({
      context: (f, fiber) => base.context(f, fiber),
      span: (name, parent, context, links, startTime, kind, options) => {
        const span = base.span(name, parent, context, links, startTime, kind, options)
        if (name !== "sql.execute") return span
        const attribute = span.attribute.bind(span)
        return Object.assign(span, {
          attribute: (key: string, value: unknown) => {
            if (key === "db.query.text") statements.push(String(value).replace(/\s+/g, " ").trim())
            attribute(key, value)
          }
        })
      }
    })
    const exit = yield* Effect.exit(Effect.withTracer(effect, counting))
    return { exit, statements }
  })
