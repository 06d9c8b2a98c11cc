// Replaced by the PostgreSQL server harness (see test/support/postgresServer.ts).
export default function setup(): void {}
