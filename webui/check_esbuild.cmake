# Fails the build with a clear message when the npm packages are missing.
if(NOT EXISTS "${ESBUILD}")
  message(FATAL_ERROR "esbuild not found at ${ESBUILD}: run scripts/bootstrap.sh "
                      "(or `npm ci` in static/) to install the dashboard's npm packages")
endif()
