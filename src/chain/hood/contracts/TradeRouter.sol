// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20, IWETH9} from "./interfaces/IERC20.sol";
import {ISwapRouter} from "./interfaces/IUniswapV3.sol";

interface ICurveFactoryRoutes {
    function curveOf(address token) external view returns (address);
    function feeSplitter() external view returns (address);
}

interface IFeeSplitterTreasury {
    function treasury() external view returns (address);
}

interface IBondingCurveTrade {
    function quoteToken() external view returns (address);
    function buy(uint256 amountIn, uint256 minAmountOut) external payable returns (uint256 amountOut, uint256 refund);
    function sell(uint256 tokensIn, uint256 minAmountOut) external returns (uint256 amountOut);
}

/// @notice The engine's Hood trades (issue 28), ETH-quoted markets: one call trades on the venue the
/// token trades on now (its factory curve, or its Uniswap v3 pool through the SwapRouter once
/// migrated) and pays the platform fee to the treasury (the fee splitter's, the launches' own) in
/// the same transaction. The fee is an input (`platformFee`): the engine's quote fixes it (the
/// plan's bps, 10 % less for a referred account, rounded up: src/domain/PlatformFee.ts), the router
/// collects exactly it, outside the venue's math:
/// - buy: msg.value = amountIn + platformFee; the venue gets amountIn (a crossing curve buy's
///   refund goes back to the trader, never charged); the tokens go to the trader;
/// - sell: the router pulls tokensIn from the trader (the trader approves THE ROUTER), sells them,
///   pays platformFee from the proceeds and the rest to the trader (ETH; a pool sell's WETH is
///   unwrapped).
/// The minimum out is the venue's own (the curve's minAmountOut, Uniswap's amountOutMinimum), on
/// the venue's output before the fee, as the Solana rail enforces it. A sell whose proceeds are
/// below the fee reverts (FeeExceedsProceeds): nothing moves. A token whose curve is not
/// ETH-quoted (a USDG curve) is refused on every entry point (NotEthQuoted).
///
/// The router holds nothing between calls: every wei and token it receives in a call leaves in
/// that call. It accepts ETH only inside a trade (the curve's refund and proceeds, WETH's unwrap).
contract TradeRouter {
    /// @notice Every routed trade. `amountOut` is the venue's output (tokens on a buy, ETH before
    /// the fee on a sell), `refund` a crossing curve buy's returned ETH.
    event RoutedTrade(
        address indexed trader,
        address indexed token,
        bool isBuy,
        bool onPool,
        uint256 amountIn,
        uint256 amountOut,
        uint256 platformFee,
        uint256 refund
    );

    error NotACurveToken(address token);
    error NotEthQuoted(address token, address quoteToken);
    error ValueMismatch(uint256 value, uint256 expected);
    error FeeExceedsProceeds(uint256 proceeds, uint256 platformFee);
    error TransferFailed();
    error Reentrancy();
    error UnexpectedEth();

    ICurveFactoryRoutes public immutable factory;
    ISwapRouter public immutable swapRouter;
    IWETH9 public immutable weth;
    /// @notice Where the platform fee goes: the fee splitter's treasury (immutable there too).
    address public immutable treasury;
    uint256 private locked = 1;

    modifier nonReentrant() {
        if (locked != 1) revert Reentrancy();
        locked = 2;
        _;
        locked = 1;
    }

    constructor(ICurveFactoryRoutes factory_, ISwapRouter swapRouter_) {
        factory = factory_;
        swapRouter = swapRouter_;
        weth = IWETH9(swapRouter_.WETH9());
        treasury = IFeeSplitterTreasury(factory_.feeSplitter()).treasury();
    }

    /// @notice Only inside a trade: the curve's refund and sale proceeds, WETH's unwrap.
    receive() external payable {
        if (locked != 2) revert UnexpectedEth();
    }

    /// @notice Buy `token` on its curve with `amountIn` (msg.value = amountIn + platformFee).
    function buyOnCurve(address token, uint256 amountIn, uint256 minAmountOut, uint256 platformFee)
        external
        payable
        nonReentrant
        returns (uint256 amountOut, uint256 refund)
    {
        if (msg.value != amountIn + platformFee) revert ValueMismatch(msg.value, amountIn + platformFee);
        IBondingCurveTrade curve = _curveOf(token);
        _payEth(treasury, platformFee);
        (amountOut, refund) = curve.buy{value: amountIn}(amountIn, minAmountOut);
        if (!IERC20(token).transfer(msg.sender, amountOut)) revert TransferFailed();
        _payEth(msg.sender, refund);
        emit RoutedTrade(msg.sender, token, true, false, amountIn, amountOut, platformFee, refund);
    }

    /// @notice Sell `tokensIn` of `token` on its curve (approve this router on the token first).
    function sellOnCurve(address token, uint256 tokensIn, uint256 minAmountOut, uint256 platformFee)
        external
        nonReentrant
        returns (uint256 amountOut)
    {
        IBondingCurveTrade curve = _curveOf(token);
        if (!IERC20(token).transferFrom(msg.sender, address(this), tokensIn)) revert TransferFailed();
        if (!IERC20(token).approve(address(curve), tokensIn)) revert TransferFailed();
        amountOut = curve.sell(tokensIn, minAmountOut);
        _settleSale(amountOut, platformFee);
        emit RoutedTrade(msg.sender, token, false, false, tokensIn, amountOut, platformFee, 0);
    }

    /// @notice Buy `token` on its graduated Uniswap v3 pool (`poolFee` tier) paying ETH
    /// (msg.value = amountIn + platformFee), the tokens straight to the trader.
    function buyOnPool(
        address token,
        uint24 poolFee,
        uint256 amountIn,
        uint256 minAmountOut,
        uint256 platformFee,
        uint256 deadline
    ) external payable nonReentrant returns (uint256 amountOut) {
        if (msg.value != amountIn + platformFee) revert ValueMismatch(msg.value, amountIn + platformFee);
        _curveOf(token);
        _payEth(treasury, platformFee);
        amountOut = swapRouter.exactInputSingle{value: amountIn}(
            ISwapRouter.ExactInputSingleParams({
                tokenIn: address(weth),
                tokenOut: token,
                fee: poolFee,
                recipient: msg.sender,
                deadline: deadline,
                amountIn: amountIn,
                amountOutMinimum: minAmountOut,
                sqrtPriceLimitX96: 0
            })
        );
        emit RoutedTrade(msg.sender, token, true, true, amountIn, amountOut, platformFee, 0);
    }

    /// @notice Sell `tokensIn` of `token` on its graduated Uniswap v3 pool for ETH (approve this
    /// router on the token first).
    function sellOnPool(
        address token,
        uint24 poolFee,
        uint256 tokensIn,
        uint256 minAmountOut,
        uint256 platformFee,
        uint256 deadline
    ) external nonReentrant returns (uint256 amountOut) {
        _curveOf(token);
        if (!IERC20(token).transferFrom(msg.sender, address(this), tokensIn)) revert TransferFailed();
        if (!IERC20(token).approve(address(swapRouter), tokensIn)) revert TransferFailed();
        amountOut = swapRouter.exactInputSingle(
            ISwapRouter.ExactInputSingleParams({
                tokenIn: token,
                tokenOut: address(weth),
                fee: poolFee,
                recipient: address(this),
                deadline: deadline,
                amountIn: tokensIn,
                amountOutMinimum: minAmountOut,
                sqrtPriceLimitX96: 0
            })
        );
        weth.withdraw(amountOut);
        _settleSale(amountOut, platformFee);
        emit RoutedTrade(msg.sender, token, false, true, tokensIn, amountOut, platformFee, 0);
    }

    /// @dev The factory's curve of `token`, which must be ETH-quoted: every entry point pays and
    /// is paid in ETH (msg.value, WETH on the pool), so a USDG curve's token is refused (NotEthQuoted).
    function _curveOf(address token) private view returns (IBondingCurveTrade) {
        address curve = factory.curveOf(token);
        if (curve == address(0)) revert NotACurveToken(token);
        address quote = IBondingCurveTrade(curve).quoteToken();
        if (quote != address(0)) revert NotEthQuoted(token, quote);
        return IBondingCurveTrade(curve);
    }

    /// @dev A sale's proceeds: the fee to the treasury, the rest to the seller.
    function _settleSale(uint256 proceeds, uint256 platformFee) private {
        if (proceeds < platformFee) revert FeeExceedsProceeds(proceeds, platformFee);
        _payEth(treasury, platformFee);
        _payEth(msg.sender, proceeds - platformFee);
    }

    function _payEth(address to, uint256 amount) private {
        if (amount == 0) return;
        (bool ok,) = to.call{value: amount}("");
        if (!ok) revert TransferFailed();
    }
}
