/**
 * The part of node-postgres (`pg`, the driver under `@effect/sql-pg`) that `Database` uses: the
 * pool it builds and hands to `PgClient.fromPool`, and the pool's named-statement query. `pg`
 * ships no typings and `@types/pg` is not a dependency we take for one file.
 */
declare module "pg" {
  export interface PoolConfig {
    connectionString?: string | undefined
    host?: string | undefined
    port?: number | undefined
    user?: string | undefined
    database?: string | undefined
    max?: number | undefined
    idleTimeoutMillis?: number | undefined
    connectionTimeoutMillis?: number | undefined
    application_name?: string | undefined
    /** The connection class the pool dials with (default `Client`). */
    Client?: typeof Client | undefined
  }
  /** One connection (the pool makes them; `Database` only subclasses it to bound its dial). */
  export class Client {
    constructor(config: PoolConfig)
  }
  export interface QueryResult {
    readonly rows: Array<Record<string, unknown>>
  }
  /** A named statement: parsed (and planned) once per connection, then bound and executed. */
  export interface NamedQuery {
    readonly name: string
    readonly text: string
    readonly values: ReadonlyArray<unknown>
  }
  export interface PoolClient {
    query(query: NamedQuery, callback: (error: Error | undefined, result: QueryResult) => void): void
    once(event: "error", listener: (error: Error) => void): this
    removeListener(event: "error", listener: (error: Error) => void): this
  }
  export class Pool {
    constructor(config: PoolConfig)
    readonly options: PoolConfig
    connect(callback: (error: Error | undefined, client: PoolClient, release: (error?: Error) => void) => void): void
    on(event: "error", listener: (error: Error) => void): this
    query(text: string): Promise<QueryResult>
    end(): Promise<void>
  }
}
