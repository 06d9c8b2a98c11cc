/**
 * Whether a database's recorded migrations belong to this build. Both runners (PostgreSQL's
 * `@effect/sql` Migrator and ClickHouse's) decide what to apply by id alone, so a data directory
 * migrated by another build (a branch's migration 6 under a different name, or a newer build's
 * migration this one does not have) would be opened with a schema the code does not know, its
 * own migration of that id silently skipped. Checked before anything is applied; the start fails
 * with the first difference.
 */
export interface MigrationId {
  readonly id: number
  readonly name: string
}

/** The first recorded migration this build does not have under the same id and name, described; undefined when every record is this build's. */
export const foreignMigration = (
  recorded: Iterable<MigrationId>,
  shipped: Iterable<MigrationId>
): string | undefined => {
  const names = new Map<number, string>()
  for (const m of shipped) names.set(m.id, m.name)
  for (const r of recorded) {
    const name = names.get(r.id)
    if (name === r.name) continue
    const what =
      name === undefined
        ? `migration ${r.id} ("${r.name}") is recorded, and this build has no migration ${r.id}`
        : `migration ${r.id} is recorded as "${r.name}", and this build's migration ${r.id} is "${name}"`
    return `${what}: the data was migrated by a different build; open it with that build or start from an empty data directory`
  }
  return undefined
}
