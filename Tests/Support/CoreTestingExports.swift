/// The test helpers of the Core package that need nothing but Foundation (``SeededRandom``),
/// seen by every test that imports Support.
@_exported import CoreTesting
