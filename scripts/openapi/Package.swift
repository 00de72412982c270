// swift-tools-version: 6.1
// The OpenAPI generator, kept out of the main package so a build of workoutd never builds it (`make openapi`
// regenerates Sources/WebAPI/Generated from Sources/WebAPI/openapi.yaml; WebServerTests check they agree).
import PackageDescription

let package = Package(
    name: "openapi-generate",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")
    ]
)
