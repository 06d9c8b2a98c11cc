// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {CurveToken} from "./CurveToken.sol";
import {FeeSplitter} from "./FeeSplitter.sol";
import {IBurnable, IERC20, IWETH9} from "./interfaces/IERC20.sol";
import {INonfungiblePositionManager, IUniswapV3Pool} from "./interfaces/IUniswapV3.sol";
import {CurveMath} from "./lib/CurveMath.sol";
import {FullMath} from "./lib/FullMath.sol";

interface ICurveFactoryView {
    function keeper() external view returns (address);
    function positionManager() external view returns (INonfungiblePositionManager);
    function weth() external view returns (address);
    function poolFee() external view returns (uint24);
    function tickSpacing() external view returns (int24);
    function stakerVault() external view returns (address);
}

/// @notice One launched token's bonding curve (constant product on virtual reserves, priced by
/// lib/CurveMath.sol = src/domain/CurveMath.ts with the capped-refund crossing). It deploys its
/// token in its constructor and holds the whole supply: X = supply − staker allocation for sale,
/// the staker allocation in escrow until graduation.
///
/// Phases: Trading → Completed (the buy whose net reaches G exactly; buys and sells then revert
/// CurveComplete) → Migrated (keeper: Uniswap v3 pool created at the final curve price and seeded
/// full-range with the quote raised) or → Recovery (keeper cancels the migration: the quote raised
/// is snapshotted, every holder redeems pro rata with claimRecovery, forever).
///
/// Accounting uses only recorded figures (virtual reserves, realQuote), never live balances, so a
/// donation of quote or tokens changes nothing: realQuote is always ≤ the quote balance.
contract BondingCurve {
    enum Phase {
        Trading,
        Completed,
        Migrated,
        Recovery
    }

    struct Init {
        address creator;
        address quoteToken;
        uint256 virtualQuote;
        uint256 graduationThreshold;
        uint256 tokenSupply;
        uint16 stakerAllocationBps;
        uint16 feeBps;
        uint8 dexVersion;
        bytes32 configHash;
        FeeSplitter feeSplitter;
        string name;
        string symbol;
        string uri;
    }

    /// @notice Every curve trade. Curve address = the log's address; `token` is the mint.
    /// Buys: `refund` and `quoteConsumed` per the capped-refund crossing (quoteConsumed + refund =
    /// amountIn). Sells: both 0. Reserves and realQuote are the values after the trade.
    event Trade(
        address indexed token,
        address indexed trader,
        bool isBuy,
        uint256 amountIn,
        uint256 amountOut,
        uint256 fee,
        uint256 refund,
        uint256 quoteConsumed,
        uint256 virtualQuoteReserve,
        uint256 virtualTokenReserve,
        uint256 realQuote,
        bool crossesGraduation
    );
    /// @notice Graduation: emitted right after the crossing buy's Trade, in the same transaction.
    event CurveCompleted(
        address indexed token, uint256 realQuote, uint256 virtualQuoteReserve, uint256 virtualTokenReserve
    );
    event CurveMigrated(
        address indexed token,
        address pool,
        uint256 positionId,
        uint128 liquidity,
        uint256 quoteAmount,
        uint256 tokenAmount,
        uint256 tokensBurned,
        uint24 poolFee,
        uint8 dexVersion
    );
    /// @notice The keeper cancelled the migration: lifecycle recovery (migration status cancelled).
    event RecoveryStarted(
        address indexed token, uint256 reserveSnapshotRaw, uint256 eligibleSupplyRaw, uint256 tokensBurned
    );
    event RecoveryClaimed(
        address indexed token, address indexed holder, uint256 amount, uint256 payout, uint256 surrenderedRaw
    );

    error CurveComplete();
    error NotCompleted();
    error NotInRecovery();
    error NotKeeper();
    error ZeroAmount();
    error ExceedsCurveSupply(uint256 tokensIn, uint256 sold);
    error ExceedsEligibleSupply(uint256 amount, uint256 unclaimed);
    error SlippageExceeded(uint256 amountOut, uint256 minAmountOut);
    error ValueMismatch(uint256 value, uint256 amountIn);
    error PoolPriceMismatch(address pool, uint160 sqrtPriceX96, uint160 expected);
    error TransferFailed();
    error Reentrancy();

    address public immutable factory;
    address public immutable token;
    address public immutable creator;
    /// @notice address(0) = native ETH, else an ERC-20 (USDG).
    address public immutable quoteToken;
    uint256 public immutable virtualQuote;
    uint256 public immutable graduationThreshold;
    uint256 public immutable tokenSupply;
    uint256 public immutable tokenReserve;
    uint256 public immutable stakerAllocation;
    uint16 public immutable stakerAllocationBps;
    /// @notice The curve fee in bps (100 by default), fixed for this curve's life.
    uint16 public immutable feeBps;
    /// @notice The graduated venue asked for at launch: 3 (dex-evm-v3) or 4 (dex-evm-v4; on this
    /// deployment v4 launches graduate into Uniswap v3 too, see docs/hood-contracts.md).
    uint8 public immutable dexVersion;
    bytes32 public immutable configHash;
    FeeSplitter public immutable feeSplitter;

    // Storage (slots in declaration order; see docs/hood-contracts.md).
    Phase public phase;
    uint256 public virtualQuoteReserve;
    uint256 public virtualTokenReserve;
    uint256 public realQuote;
    uint256 public reserveSnapshotRaw;
    uint256 public eligibleSupplyRaw;
    uint256 public surrenderedRaw;
    address public pool;
    uint256 public lpTokenId;
    uint256 private locked = 1;

    modifier nonReentrant() {
        if (locked != 1) revert Reentrancy();
        locked = 2;
        _;
        locked = 1;
    }

    constructor(Init memory i) {
        factory = msg.sender;
        creator = i.creator;
        quoteToken = i.quoteToken;
        virtualQuote = i.virtualQuote;
        graduationThreshold = i.graduationThreshold;
        tokenSupply = i.tokenSupply;
        stakerAllocationBps = i.stakerAllocationBps;
        stakerAllocation = (i.tokenSupply * i.stakerAllocationBps) / CurveMath.BPS;
        tokenReserve = i.tokenSupply - stakerAllocation;
        feeBps = i.feeBps;
        dexVersion = i.dexVersion;
        configHash = i.configHash;
        feeSplitter = i.feeSplitter;
        token = address(new CurveToken(i.name, i.symbol, i.uri, i.tokenSupply, address(this)));
        virtualQuoteReserve = i.virtualQuote;
        virtualTokenReserve = tokenReserve;
    }

    // --- Reads ------------------------------------------------------------------------------

    /// @notice Everything a market record needs, read at one block.
    function curveState()
        external
        view
        returns (
            Phase phase_,
            uint256 virtualQuoteReserve_,
            uint256 virtualTokenReserve_,
            uint256 realQuote_,
            uint256 reserveSnapshotRaw_,
            uint256 eligibleSupplyRaw_,
            uint256 surrenderedRaw_,
            address pool_,
            uint256 lpTokenId_
        )
    {
        return (
            phase,
            virtualQuoteReserve,
            virtualTokenReserve,
            realQuote,
            reserveSnapshotRaw,
            eligibleSupplyRaw,
            surrenderedRaw,
            pool,
            lpTokenId
        );
    }

    function quoteBuy(uint256 amountIn)
        external
        view
        returns (uint256 amountOut, uint256 fee, uint256 quoteConsumed, uint256 refund, bool crossesGraduation)
    {
        if (phase != Phase.Trading) revert CurveComplete();
        CurveMath.Buy memory q = _quoteBuy(amountIn);
        return (q.amountOut, q.fee, q.quoteConsumed, q.refund, realQuote + q.net >= graduationThreshold);
    }

    function quoteSell(uint256 tokensIn) external view returns (uint256 amountOut, uint256 fee, uint256 grossOut) {
        if (phase != Phase.Trading) revert CurveComplete();
        CurveMath.Sell memory q = _quoteSell(tokensIn);
        return (q.amountOut, q.fee, q.grossOut);
    }

    // --- Trading ----------------------------------------------------------------------------

    /// @notice Buy with `amountIn` of the quote (ETH: msg.value must equal it; ERC-20: approve the
    /// curve first; only `quoteConsumed` is pulled, so the refund is never taken). A buy that would
    /// pass the threshold is capped to reach it exactly; the rest is refunded (ETH sent back).
    function buy(uint256 amountIn, uint256 minAmountOut)
        external
        payable
        nonReentrant
        returns (uint256 amountOut, uint256 refund)
    {
        if (phase != Phase.Trading) revert CurveComplete();
        bool native = quoteToken == address(0);
        if (native ? msg.value != amountIn : msg.value != 0) revert ValueMismatch(msg.value, amountIn);
        CurveMath.Buy memory q = _quoteBuy(amountIn);
        if (q.amountOut < minAmountOut) revert SlippageExceeded(q.amountOut, minAmountOut);

        uint256 vQuote = virtualQuoteReserve + q.net;
        uint256 vTok = virtualTokenReserve - q.amountOut;
        uint256 real = realQuote + q.net;
        bool crosses = real >= graduationThreshold;
        virtualQuoteReserve = vQuote;
        virtualTokenReserve = vTok;
        realQuote = real;
        if (crosses) phase = Phase.Completed;

        if (!native) _pullQuote(msg.sender, q.quoteConsumed);
        if (!IERC20(token).transfer(msg.sender, q.amountOut)) revert TransferFailed();
        _sendFee(q.fee);
        if (native && q.refund > 0) _payQuote(msg.sender, q.refund);

        emit Trade(
            token, msg.sender, true, amountIn, q.amountOut, q.fee, q.refund, q.quoteConsumed, vQuote, vTok, real, crosses
        );
        if (crosses) emit CurveCompleted(token, real, vQuote, vTok);
        return (q.amountOut, q.refund);
    }

    /// @notice Sell `tokensIn` (approve the curve on the token first) for at least `minAmountOut`.
    function sell(uint256 tokensIn, uint256 minAmountOut) external nonReentrant returns (uint256 amountOut) {
        if (phase != Phase.Trading) revert CurveComplete();
        CurveMath.Sell memory q = _quoteSell(tokensIn);
        if (q.amountOut < minAmountOut) revert SlippageExceeded(q.amountOut, minAmountOut);

        uint256 vQuote = virtualQuoteReserve - q.grossOut;
        uint256 vTok = virtualTokenReserve + tokensIn;
        uint256 real = realQuote - q.grossOut;
        virtualQuoteReserve = vQuote;
        virtualTokenReserve = vTok;
        realQuote = real;

        if (!IERC20(token).transferFrom(msg.sender, address(this), tokensIn)) revert TransferFailed();
        _payQuote(msg.sender, q.amountOut);
        _sendFee(q.fee);

        emit Trade(token, msg.sender, false, tokensIn, q.amountOut, q.fee, 0, 0, vQuote, vTok, real, false);
        return q.amountOut;
    }

    // --- Graduation -------------------------------------------------------------------------

    /// @notice Keeper only, once Completed: create and initialise the Uniswap v3 pool (token/quote,
    /// WETH for ETH) at the curve's final price vQuote/vTok, seed a full-range position with the
    /// quote raised and the tokens that price needs (the LP NFT goes to the fee splitter), send the
    /// staker allocation to the factory's staker vault and burn the tokens left over. Reverts
    /// PoolPriceMismatch when a pool already exists at another price (the keeper retries or cancels).
    function migrate() external nonReentrant returns (address pool_, uint256 positionId, uint128 liquidity) {
        ICurveFactoryView f = ICurveFactoryView(factory);
        if (msg.sender != f.keeper()) revert NotKeeper();
        if (phase != Phase.Completed) revert NotCompleted();
        INonfungiblePositionManager npm = f.positionManager();
        address quoteAsset = quoteToken == address(0) ? f.weth() : quoteToken;
        uint256 quoteAmount = realQuote;
        uint256 tokenAmount = virtualTokenReserve;
        if (quoteToken == address(0)) IWETH9(quoteAsset).deposit{value: quoteAmount}();

        bool tokenIs0 = token < quoteAsset;
        uint160 sqrtPriceX96 = tokenIs0
            ? _sqrtPriceX96(virtualQuoteReserve, virtualTokenReserve)
            : _sqrtPriceX96(virtualTokenReserve, virtualQuoteReserve);
        uint24 poolFee = f.poolFee();
        pool_ = npm.createAndInitializePoolIfNecessary(
            tokenIs0 ? token : quoteAsset, tokenIs0 ? quoteAsset : token, poolFee, sqrtPriceX96
        );
        (uint160 current,,,,,,) = IUniswapV3Pool(pool_).slot0();
        if (current != sqrtPriceX96) revert PoolPriceMismatch(pool_, current, sqrtPriceX96);

        IERC20(token).approve(address(npm), tokenAmount);
        IERC20(quoteAsset).approve(address(npm), quoteAmount);
        int24 maxTick = (int24(887272) / f.tickSpacing()) * f.tickSpacing();
        uint256 used0;
        uint256 used1;
        (positionId, liquidity, used0, used1) = npm.mint(
            INonfungiblePositionManager.MintParams({
                token0: tokenIs0 ? token : quoteAsset,
                token1: tokenIs0 ? quoteAsset : token,
                fee: poolFee,
                tickLower: -maxTick,
                tickUpper: maxTick,
                amount0Desired: tokenIs0 ? tokenAmount : quoteAmount,
                amount1Desired: tokenIs0 ? quoteAmount : tokenAmount,
                amount0Min: 0,
                amount1Min: 0,
                recipient: address(feeSplitter),
                deadline: block.timestamp
            })
        );
        IERC20(token).approve(address(npm), 0);
        IERC20(quoteAsset).approve(address(npm), 0);

        phase = Phase.Migrated;
        pool = pool_;
        lpTokenId = positionId;
        feeSplitter.registerLpPosition(positionId);
        if (stakerAllocation > 0 && !IERC20(token).transfer(f.stakerVault(), stakerAllocation)) revert TransferFailed();
        uint256 leftover = IERC20(token).balanceOf(address(this));
        if (leftover > 0) IBurnable(token).burn(leftover);
        (uint256 tokensUsed, uint256 quoteUsed) = tokenIs0 ? (used0, used1) : (used1, used0);
        emit CurveMigrated(token, pool_, positionId, liquidity, quoteUsed, tokensUsed, leftover, poolFee, dexVersion);
    }

    /// @notice Keeper only, once Completed: no pool will open. Snapshot the quote raised and the
    /// tokens in holders' hands, burn the curve's own tokens, and open claimRecovery.
    function cancelMigration() external nonReentrant {
        if (msg.sender != ICurveFactoryView(factory).keeper()) revert NotKeeper();
        if (phase != Phase.Completed) revert NotCompleted();
        phase = Phase.Recovery;
        uint256 reserve = realQuote;
        uint256 eligible = tokenReserve - virtualTokenReserve;
        reserveSnapshotRaw = reserve;
        eligibleSupplyRaw = eligible;
        uint256 held = IERC20(token).balanceOf(address(this));
        if (held > 0) IBurnable(token).burn(held);
        emit RecoveryStarted(token, reserve, eligible, held);
    }

    /// @notice Recovery only: surrender `amount` tokens (approve the curve first; they are burned)
    /// for floor(amount·reserveSnapshotRaw/eligibleSupplyRaw) of the quote. The rate is fixed by the
    /// snapshot, so claim order changes nothing, and claims never expire.
    function claimRecovery(uint256 amount) external nonReentrant returns (uint256 payout) {
        if (phase != Phase.Recovery) revert NotInRecovery();
        if (amount == 0) revert ZeroAmount();
        uint256 surrendered = surrenderedRaw + amount;
        if (surrendered > eligibleSupplyRaw) revert ExceedsEligibleSupply(amount, eligibleSupplyRaw - surrenderedRaw);
        payout = FullMath.mulDiv(amount, reserveSnapshotRaw, eligibleSupplyRaw);
        surrenderedRaw = surrendered;
        if (!IERC20(token).transferFrom(msg.sender, address(this), amount)) revert TransferFailed();
        IBurnable(token).burn(amount);
        _payQuote(msg.sender, payout);
        emit RecoveryClaimed(token, msg.sender, amount, payout, surrendered);
    }

    // --- Internals --------------------------------------------------------------------------

    function _quoteBuy(uint256 amountIn) private view returns (CurveMath.Buy memory q) {
        if (amountIn == 0) revert ZeroAmount();
        uint256 fee = CurveMath.ceilDiv(amountIn * feeBps, CurveMath.BPS);
        if (amountIn - fee == 0) revert ZeroAmount();
        q = CurveMath.quoteBuy(
            virtualQuoteReserve, virtualTokenReserve, graduationThreshold - realQuote, feeBps, amountIn
        );
    }

    function _quoteSell(uint256 tokensIn) private view returns (CurveMath.Sell memory q) {
        if (tokensIn == 0) revert ZeroAmount();
        uint256 sold = tokenReserve - virtualTokenReserve;
        if (tokensIn > sold) revert ExceedsCurveSupply(tokensIn, sold);
        q = CurveMath.quoteSell(virtualQuoteReserve, virtualTokenReserve, feeBps, tokensIn);
    }

    function _pullQuote(address from, uint256 amount) private {
        if (amount > 0 && !IERC20(quoteToken).transferFrom(from, address(this), amount)) revert TransferFailed();
    }

    function _payQuote(address to, uint256 amount) private {
        if (amount == 0) return;
        bool ok;
        if (quoteToken == address(0)) {
            (ok,) = to.call{value: amount}("");
        } else {
            ok = IERC20(quoteToken).transfer(to, amount);
        }
        if (!ok) revert TransferFailed();
    }

    function _sendFee(uint256 fee) private {
        if (fee == 0) return;
        if (quoteToken == address(0)) {
            feeSplitter.accrue{value: fee}(fee);
        } else {
            if (!IERC20(quoteToken).transfer(address(feeSplitter), fee)) revert TransferFailed();
            feeSplitter.accrue(fee);
        }
    }

    /// @dev sqrt(num/den)·2^96 rounded down: the pool price token1/token0 in raw units.
    function _sqrtPriceX96(uint256 num, uint256 den) private pure returns (uint160) {
        if (num / den < (1 << 64)) return uint160(FullMath.sqrt(FullMath.mulDiv(num, 1 << 192, den)));
        return uint160(FullMath.sqrt(FullMath.mulDiv(num, 1 << 128, den)) << 32);
    }
}
