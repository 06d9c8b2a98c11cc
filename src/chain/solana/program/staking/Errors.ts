/**
 * svc-stake's custom program errors, from 6000 like svc-curve's (the program id tells them apart).
 * A code is never repurposed; `stakeErrorName` reverses the table.
 */
export const SvcStakeError = {
  PoolPaused: 6000,
  ZeroAmount: 6001,
  TooManyWithdrawals: 6002,
  WithdrawalLocked: 6003,
  WithdrawalFinished: 6004,
  NotWithdrawalOwner: 6005,
  NotAuthority: 6006,
  RewardAlreadyClaimed: 6007,
  InvalidAccount: 6008,
  InvalidInstruction: 6009,
  MathOverflow: 6010,
  InvalidPoolParams: 6011
} as const

export type SvcStakeErrorName = keyof typeof SvcStakeError

export const stakeErrorName = (code: number): SvcStakeErrorName | undefined =>
  (Object.keys(SvcStakeError) as SvcStakeErrorName[]).find((k) => SvcStakeError[k] === code)
