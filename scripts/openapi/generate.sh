#!/bin/sh
# Regenerates Sources/WebAPI/Generated from Sources/WebAPI/openapi.yaml (`make openapi`).
#
# The generated sources are checked in, so building workoutd never builds the generator (OpenAPIKit, a few
# minutes cold): the contract changes rarely, and a diff of the generated code is reviewed with it.
# `public import` becomes `import` (public by default in Swift 6 mode): the generator marks every file's imports
# public and silences the "not used" warning only from Swift 6.4 on, and this package builds warning-free.
# Each file is marked `swift-format-ignore-file`: it keeps the generator's layout, and a formatter run over the
# whole tree (an editor's, a hook's) leaves it alone, as `make lint` does.
set -eu
cd "$(dirname "$0")/../.."
swift build -c release --package-path scripts/openapi --product swift-openapi-generator
rm -rf Sources/WebAPI/Generated
scripts/openapi/.build/release/swift-openapi-generator generate \
    --config Sources/WebAPI/openapi-generator-config.yaml \
    --output-directory Sources/WebAPI/Generated Sources/WebAPI/openapi.yaml
sed -i -e 's/^public import /import /' -e 's/^@_spi(Generated) public import /@_spi(Generated) import /' \
    -e "1a // swift-format-ignore-file" Sources/WebAPI/Generated/*.swift
