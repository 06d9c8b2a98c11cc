// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {BondingCurve} from "./BondingCurve.sol";
import {FeeSplitter} from "./FeeSplitter.sol";
import {IERC20} from "./interfaces/IERC20.sol";
import {INonfungiblePositionManager} from "./interfaces/IUniswapV3.sol";

/// @notice Launches curves. `createCurve` is non-payable (every cost is gas; the platform fee leg
/// is a separate transfer) and deploys, with CREATE2 (salt = keccak256(creator, salt)), a
/// BondingCurve that deploys its CurveToken; the curve's fee recipient is registered in the fee
/// splitter in the same transaction, once. The token supply (1e9 tokens, 18 decimals) and the
/// curve fee are the factory's; V, G, the staker allocation and dexVersion are the launch's
/// (the engine resolves them from its economics matrix; configHash lets anyone check them).
///
/// configHash = keccak256(abi.encode(quoteToken, virtualQuote, graduationThreshold, tokenSupply,
/// stakerAllocationBps, feeBps, dexVersion)) — src/chain/hood/client/ConfigHash.ts computes the same.
contract CurveFactory {
    uint256 public constant TOKEN_SUPPLY = 1_000_000_000 * 1e18;
    uint16 public constant MIN_STAKER_ALLOCATION_BPS = 50;
    uint16 public constant MAX_STAKER_ALLOCATION_BPS = 1_000;
    uint16 public constant MAX_CURVE_FEE_BPS = 1_000;
    uint256 public constant MAX_VIRTUAL_QUOTE = 1 << 112;
    uint256 public constant MAX_NAME_BYTES = 32;
    uint256 public constant MAX_SYMBOL_BYTES = 10;
    uint256 public constant MAX_URI_BYTES = 512;

    struct CreateParams {
        string name;
        string symbol;
        string uri;
        address quoteToken;
        uint256 virtualQuote;
        uint256 graduationThreshold;
        uint16 stakerAllocationBps;
        uint8 dexVersion;
        bytes32 salt;
    }

    event CurveCreated(
        address indexed curve,
        address indexed token,
        address indexed creator,
        address quoteToken,
        uint256 virtualQuote,
        uint256 graduationThreshold,
        uint256 stakerAllocation,
        uint8 dexVersion,
        bytes32 configHash,
        uint256 tokenSupply,
        uint256 tokenReserve,
        uint16 stakerAllocationBps,
        uint16 feeBps,
        uint8 quoteDecimals,
        string name,
        string symbol,
        string uri
    );
    event KeeperChanged(address keeper);
    event QuoteAllowed(address quoteToken, bool allowed);
    event CurveFeeChanged(uint16 feeBps);

    error NotOwner();
    error QuoteNotAllowed(address quoteToken);
    error InvalidCurveParams(string reason);
    error InvalidMetadata(string reason);

    address public immutable owner;
    FeeSplitter public immutable feeSplitter;
    INonfungiblePositionManager public immutable positionManager;
    address public immutable weth;
    address public immutable stakerVault;
    uint24 public immutable poolFee;
    int24 public immutable tickSpacing;

    address public keeper;
    /// @notice Fee of curves created from now on (each curve keeps the fee it was created with).
    uint16 public curveFeeBps = 100;
    uint256 public curveCount;
    mapping(address quoteToken => bool) public quoteAllowed;
    mapping(address curve => bool) public isCurve;
    mapping(address token => address curve) public curveOf;

    constructor(
        FeeSplitter feeSplitter_,
        INonfungiblePositionManager positionManager_,
        address stakerVault_,
        address keeper_,
        uint24 poolFee_,
        int24 tickSpacing_
    ) {
        owner = msg.sender;
        feeSplitter = feeSplitter_;
        positionManager = positionManager_;
        weth = positionManager_.WETH9();
        stakerVault = stakerVault_;
        keeper = keeper_;
        poolFee = poolFee_;
        tickSpacing = tickSpacing_;
        quoteAllowed[address(0)] = true;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    function setKeeper(address keeper_) external onlyOwner {
        keeper = keeper_;
        emit KeeperChanged(keeper_);
    }

    function setQuoteAllowed(address quoteToken, bool allowed) external onlyOwner {
        quoteAllowed[quoteToken] = allowed;
        emit QuoteAllowed(quoteToken, allowed);
    }

    function setCurveFeeBps(uint16 feeBps) external onlyOwner {
        if (feeBps > MAX_CURVE_FEE_BPS) revert InvalidCurveParams("feeBps");
        curveFeeBps = feeBps;
        emit CurveFeeChanged(feeBps);
    }

    function configHashOf(
        address quoteToken,
        uint256 virtualQuote,
        uint256 graduationThreshold,
        uint16 stakerAllocationBps,
        uint16 feeBps,
        uint8 dexVersion
    ) public pure returns (bytes32) {
        return keccak256(
            abi.encode(quoteToken, virtualQuote, graduationThreshold, TOKEN_SUPPLY, stakerAllocationBps, feeBps, dexVersion)
        );
    }

    function createCurve(CreateParams calldata p) external returns (address curve, address token) {
        if (!quoteAllowed[p.quoteToken]) revert QuoteNotAllowed(p.quoteToken);
        if (p.virtualQuote == 0 || p.virtualQuote > MAX_VIRTUAL_QUOTE) revert InvalidCurveParams("virtualQuote");
        if (p.graduationThreshold == 0 || p.graduationThreshold > MAX_VIRTUAL_QUOTE) {
            revert InvalidCurveParams("graduationThreshold");
        }
        if (p.stakerAllocationBps < MIN_STAKER_ALLOCATION_BPS || p.stakerAllocationBps > MAX_STAKER_ALLOCATION_BPS) {
            revert InvalidCurveParams("stakerAllocationBps");
        }
        if (p.dexVersion != 3 && p.dexVersion != 4) revert InvalidCurveParams("dexVersion");
        uint256 nameBytes = bytes(p.name).length;
        uint256 symbolBytes = bytes(p.symbol).length;
        if (nameBytes == 0 || nameBytes > MAX_NAME_BYTES) revert InvalidMetadata("name");
        if (symbolBytes == 0 || symbolBytes > MAX_SYMBOL_BYTES) revert InvalidMetadata("symbol");
        if (bytes(p.uri).length > MAX_URI_BYTES) revert InvalidMetadata("uri");

        uint16 feeBps = curveFeeBps;
        bytes32 configHash =
            configHashOf(p.quoteToken, p.virtualQuote, p.graduationThreshold, p.stakerAllocationBps, feeBps, p.dexVersion);
        BondingCurve c = new BondingCurve{salt: keccak256(abi.encode(msg.sender, p.salt))}(
            BondingCurve.Init({
                creator: msg.sender,
                quoteToken: p.quoteToken,
                virtualQuote: p.virtualQuote,
                graduationThreshold: p.graduationThreshold,
                tokenSupply: TOKEN_SUPPLY,
                stakerAllocationBps: p.stakerAllocationBps,
                feeBps: feeBps,
                dexVersion: p.dexVersion,
                configHash: configHash,
                feeSplitter: feeSplitter,
                name: p.name,
                symbol: p.symbol,
                uri: p.uri
            })
        );
        curve = address(c);
        token = c.token();
        isCurve[curve] = true;
        curveOf[token] = curve;
        curveCount += 1;
        feeSplitter.registerCurve(curve, token, msg.sender, p.quoteToken);
        _emitCreated(c, p, configHash, feeBps);
    }

    function _emitCreated(BondingCurve c, CreateParams calldata p, bytes32 configHash, uint16 feeBps) private {
        emit CurveCreated(
            address(c),
            c.token(),
            msg.sender,
            p.quoteToken,
            p.virtualQuote,
            p.graduationThreshold,
            c.stakerAllocation(),
            p.dexVersion,
            configHash,
            TOKEN_SUPPLY,
            c.tokenReserve(),
            p.stakerAllocationBps,
            feeBps,
            p.quoteToken == address(0) ? 18 : IERC20(p.quoteToken).decimals(),
            p.name,
            p.symbol,
            p.uri
        );
    }
}
