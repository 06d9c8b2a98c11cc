/**
 * The tail cache: the newest durable records of one partition, consecutive by offset, bounded by
 * an accounted byte size (frame bytes plus a per-record overhead). Live consumers read here and
 * never touch the files; the oldest records fall out first. At least the newest record is kept
 * even when it alone exceeds the bound, so the cache always ends at the high watermark.
 */
import type { BusRecord } from "../Bus.js"

export class RecordCache {
  private records: Array<BusRecord> = []
  private sizes: Array<number> = []
  private head = 0
  private bytes = 0

  constructor(readonly capacityBytes: number) {}

  get count(): number {
    return this.records.length - this.head
  }

  get sizeBytes(): number {
    return this.bytes
  }

  /** Offset of the oldest cached record, or undefined when empty. */
  get firstOffset(): number | undefined {
    return this.head < this.records.length ? this.records[this.head]!.offset : undefined
  }

  /** Appends the next record (offsets must be consecutive) and evicts past the bound. */
  push(record: BusRecord, sizeBytes: number): void {
    this.records.push(record)
    this.sizes.push(sizeBytes)
    this.bytes += sizeBytes
    while (this.bytes > this.capacityBytes && this.count > 1) this.dropFirst()
    this.compact()
  }

  /** Up to `max` records from `offset`, which must be within the cache. */
  slice(offset: number, max: number): Array<BusRecord> {
    const start = this.head + (offset - this.firstOffset!)
    return this.records.slice(start, Math.min(start + max, this.records.length))
  }

  /** Drops records below `offset` (retention moved the log start past them). */
  evictBelow(offset: number): void {
    while (this.count > 0 && this.records[this.head]!.offset < offset) this.dropFirst()
    this.compact()
  }

  private dropFirst(): void {
    this.bytes -= this.sizes[this.head]!
    // Free the reference now; the slot is reclaimed by compact().
    ;(this.records as Array<BusRecord | undefined>)[this.head] = undefined
    this.head++
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.records.length) {
      this.records = this.records.slice(this.head)
      this.sizes = this.sizes.slice(this.head)
      this.head = 0
    }
  }
}
