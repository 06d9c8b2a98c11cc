/**
 * The accounts database and copy-on-write overlays over it. Stored accounts are immutable values
 * (replaced, never mutated), so an overlay is a cheap snapshot for a simulation, a transaction or
 * a bundle: reads fall through to the parent, writes stay in the overlay until `commitTo`.
 * Invariant: nothing stores an account with 0 lamports; writing one deletes it (Solana purges
 * zero-lamport accounts at the end of a transaction).
 */
import type { Address } from "@solana/kit"

export interface StoredAccount {
  readonly lamports: bigint
  readonly owner: Address
  readonly data: Uint8Array
  readonly executable: boolean
}

export interface AccountsReader {
  get(address: string): StoredAccount | undefined
}

export interface AccountsWriter extends AccountsReader {
  set(address: string, account: StoredAccount | undefined): void
}

const live = (a: StoredAccount | undefined): StoredAccount | undefined => (a === undefined || a.lamports === 0n ? undefined : a)

export class AccountsDb implements AccountsWriter {
  private readonly map = new Map<string, StoredAccount>()

  get(address: string): StoredAccount | undefined {
    return this.map.get(address)
  }

  set(address: string, account: StoredAccount | undefined): void {
    const a = live(account)
    if (a === undefined) this.map.delete(address)
    else this.map.set(address, a)
  }

  get size(): number {
    return this.map.size
  }

  entries(): IterableIterator<[string, StoredAccount]> {
    return this.map.entries()
  }
}

export class AccountsOverlay implements AccountsWriter {
  private readonly writes = new Map<string, StoredAccount | undefined>()

  constructor(private readonly parent: AccountsReader) {}

  get(address: string): StoredAccount | undefined {
    return this.writes.has(address) ? this.writes.get(address) : this.parent.get(address)
  }

  set(address: string, account: StoredAccount | undefined): void {
    this.writes.set(address, live(account))
  }

  commitTo(target: AccountsWriter): void {
    for (const [address, account] of this.writes) target.set(address, account)
    this.writes.clear()
  }
}
