// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "./interfaces/IERC20.sol";
import {INonfungiblePositionManager} from "./interfaces/IUniswapV3.sol";

/// @notice Receives every curve's trading fee and, after graduation, holds the curve's Uniswap v3
/// LP position; splits both between the curve's streamer (the launching wallet) and the platform
/// treasury. Recipients are fixed: the treasury and the streamer share are immutable, and a curve's
/// streamer is written once, by the factory, in the same transaction that creates the curve; there
/// is no setter. Accounting is per curve and per asset (address(0) = native ETH), so what one mint
/// owes its creator is never mixed with another's.
///
/// Split of each amount credited: streamer floor(amount·streamerShareBps/10000), the treasury the rest.
/// Invariant per asset: balance ≥ Σ streamerOwed + platformOwed (credits only follow receipts).
contract FeeSplitter {
    uint256 internal constant BPS = 10_000;

    event CurveRegistered(address indexed curve, address indexed token, address indexed streamer, address quoteAsset);
    event FeeAccrued(address indexed curve, address indexed asset, uint256 amount, uint256 streamerPart);
    event LpPositionRegistered(address indexed curve, uint256 tokenId);
    event LpFeesCollected(address indexed curve, address asset0, uint256 amount0, address asset1, uint256 amount1);
    /// @notice The streamer's claim (chain event CreatorFeeClaimed; `token` is the launched mint).
    event CreatorFeeClaimed(
        address indexed curve, address indexed token, address indexed recipient, address asset, uint256 amount
    );
    event PlatformFeeClaimed(address indexed treasury, address indexed asset, uint256 amount);

    error NotDeployer();
    error NotFactory();
    error NotCurve();
    error AlreadySet();
    error NotRecipient(address caller, address recipient);
    error ValueMismatch(uint256 value, uint256 amount);
    error NoPosition();
    error TransferFailed();

    address public immutable treasury;
    uint16 public immutable streamerShareBps;
    /// @notice The Uniswap v3 position manager whose positions this splitter holds (trusted).
    INonfungiblePositionManager public immutable positionManager;
    address private immutable deployer;
    address public factory;

    struct CurveInfo {
        address token;
        address streamer;
        address quoteAsset;
        uint256 lpTokenId;
    }

    mapping(address curve => CurveInfo) public curves;
    mapping(address curve => mapping(address asset => uint256)) public streamerOwed;
    mapping(address asset => uint256) public platformOwed;

    constructor(address treasury_, uint16 streamerShareBps_, INonfungiblePositionManager positionManager_) {
        require(treasury_ != address(0) && streamerShareBps_ <= BPS);
        treasury = treasury_;
        streamerShareBps = streamerShareBps_;
        positionManager = positionManager_;
        deployer = msg.sender;
    }

    /// @notice One-shot wiring: the factory is deployed after the splitter it names.
    function setFactory(address factory_) external {
        if (msg.sender != deployer) revert NotDeployer();
        if (factory != address(0)) revert AlreadySet();
        factory = factory_;
    }

    function registerCurve(address curve, address token, address streamer, address quoteAsset) external {
        if (msg.sender != factory) revert NotFactory();
        if (curves[curve].streamer != address(0)) revert AlreadySet();
        curves[curve] = CurveInfo({token: token, streamer: streamer, quoteAsset: quoteAsset, lpTokenId: 0});
        emit CurveRegistered(curve, token, streamer, quoteAsset);
    }

    /// @notice A registered curve reports a fee it has just sent: ETH as msg.value, an ERC-20 by a
    /// transfer made before this call.
    function accrue(uint256 amount) external payable {
        CurveInfo storage c = _curve(msg.sender);
        if (c.quoteAsset == address(0) ? msg.value != amount : msg.value != 0) revert ValueMismatch(msg.value, amount);
        _credit(msg.sender, c.quoteAsset, amount);
    }

    function registerLpPosition(uint256 tokenId) external {
        CurveInfo storage c = _curve(msg.sender);
        if (c.lpTokenId != 0) revert AlreadySet();
        c.lpTokenId = tokenId;
        emit LpPositionRegistered(msg.sender, tokenId);
    }

    /// @notice Anyone may pull a graduated curve's LP fees into the splitter; they are split like
    /// curve fees, in the pool's two tokens (the launched token and the quote, WETH for ETH).
    function collectLpFees(address curve) external returns (uint256 amount0, uint256 amount1) {
        CurveInfo storage c = _curve(curve);
        if (c.lpTokenId == 0) revert NoPosition();
        (address asset0, address asset1) = _positionTokens(c.lpTokenId);
        (amount0, amount1) = positionManager.collect(
            INonfungiblePositionManager.CollectParams({
                tokenId: c.lpTokenId,
                recipient: address(this),
                amount0Max: type(uint128).max,
                amount1Max: type(uint128).max
            })
        );
        if (amount0 > 0) _credit(curve, asset0, amount0);
        if (amount1 > 0) _credit(curve, asset1, amount1);
        emit LpFeesCollected(curve, asset0, amount0, asset1, amount1);
    }

    /// @notice The streamer takes what it is owed in one asset; paid only to the recorded streamer.
    function claim(address curve, address asset) external returns (uint256 amount) {
        CurveInfo storage c = _curve(curve);
        if (msg.sender != c.streamer) revert NotRecipient(msg.sender, c.streamer);
        amount = streamerOwed[curve][asset];
        streamerOwed[curve][asset] = 0;
        _pay(asset, c.streamer, amount);
        emit CreatorFeeClaimed(curve, c.token, c.streamer, asset, amount);
    }

    function claimPlatform(address asset) external returns (uint256 amount) {
        amount = platformOwed[asset];
        platformOwed[asset] = 0;
        _pay(asset, treasury, amount);
        emit PlatformFeeClaimed(treasury, asset, amount);
    }

    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC721Received.selector;
    }

    function _curve(address curve) private view returns (CurveInfo storage c) {
        c = curves[curve];
        if (c.streamer == address(0)) revert NotCurve();
    }

    function _credit(address curve, address asset, uint256 amount) private {
        uint256 streamerPart = (amount * streamerShareBps) / BPS;
        streamerOwed[curve][asset] += streamerPart;
        platformOwed[asset] += amount - streamerPart;
        emit FeeAccrued(curve, asset, amount, streamerPart);
    }

    function _pay(address asset, address to, uint256 amount) private {
        if (amount == 0) return;
        bool ok;
        if (asset == address(0)) {
            (ok,) = to.call{value: amount}("");
        } else {
            ok = IERC20(asset).transfer(to, amount);
        }
        if (!ok) revert TransferFailed();
    }

    function _positionTokens(uint256 tokenId) private view returns (address token0, address token1) {
        (bool ok, bytes memory data) =
            address(positionManager).staticcall(abi.encodeWithSignature("positions(uint256)", tokenId));
        require(ok && data.length >= 128);
        (,, token0, token1) = abi.decode(data, (uint96, address, address, address));
    }
}
