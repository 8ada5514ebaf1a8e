# The console's terminal widget, xterm.js (MIT), fetched at configure time from the npm
# registry as its published tarball, checked against the SHA-512 npm records for it
# (`npm view @xterm/xterm@VERSION dist.integrity`), and unpacked into the build tree:
# the package stays npm's, pinned, and no Node.js is needed to build the daemon.
# Offline: TRAINYARD_XTERM_TGZ names a copy of the tarball; NPM_CONFIG_REGISTRY a mirror.
# Sets TY_CONSOLE_VENDOR_DIR (xterm.js, xterm.css, xterm-LICENSE.txt) and
# TY_CONSOLE_VENDOR_FILES.
set(TY_XTERM_VERSION 6.0.0)
set(TY_XTERM_SHA512
    4d0c037501adc300edfb67202832e7d0845a4b162ed6d4948e029aad20e450cd193624915c5a63c44b2f73f66073992ae68989f95d1af3f908336583dec30e62)
set(TY_CONSOLE_VENDOR_DIR ${CMAKE_BINARY_DIR}/console-vendor)
set(TY_CONSOLE_VENDOR_FILES xterm.js xterm.css xterm-LICENSE.txt)

set(_xterm_tgz ${TY_CONSOLE_VENDOR_DIR}/xterm-${TY_XTERM_VERSION}.tgz)
if(DEFINED ENV{TRAINYARD_XTERM_TGZ})
  set(_xterm_tgz $ENV{TRAINYARD_XTERM_TGZ})
elseif(NOT EXISTS ${_xterm_tgz})
  set(_registry https://registry.npmjs.org)
  if(DEFINED ENV{NPM_CONFIG_REGISTRY})
    string(REGEX REPLACE "/$" "" _registry "$ENV{NPM_CONFIG_REGISTRY}")
  endif()
  set(_url ${_registry}/@xterm/xterm/-/xterm-${TY_XTERM_VERSION}.tgz)
  message(STATUS "console: fetching xterm.js ${TY_XTERM_VERSION} from ${_url}")
  file(DOWNLOAD ${_url} ${_xterm_tgz}.part STATUS _status TLS_VERIFY ON TIMEOUT 120)
  list(GET _status 0 _code)
  if(NOT _code EQUAL 0)
    file(REMOVE ${_xterm_tgz}.part)
    message(FATAL_ERROR "console: cannot fetch ${_url}: ${_status} "
                        "(set TRAINYARD_XTERM_TGZ to a local copy of the tarball)")
  endif()
  file(RENAME ${_xterm_tgz}.part ${_xterm_tgz})
endif()
file(SHA512 ${_xterm_tgz} _got)
if(NOT _got STREQUAL TY_XTERM_SHA512)
  message(FATAL_ERROR "console: ${_xterm_tgz} is not xterm ${TY_XTERM_VERSION} as npm published it "
                      "(SHA-512 ${_got})")
endif()
if(NOT EXISTS ${TY_CONSOLE_VENDOR_DIR}/xterm.js OR ${_xterm_tgz} IS_NEWER_THAN
                                                   ${TY_CONSOLE_VENDOR_DIR}/xterm.js)
  file(REMOVE_RECURSE ${TY_CONSOLE_VENDOR_DIR}/unpacked)
  file(ARCHIVE_EXTRACT INPUT ${_xterm_tgz} DESTINATION ${TY_CONSOLE_VENDOR_DIR}/unpacked
       PATTERNS package/lib/xterm.js package/css/xterm.css package/LICENSE)
  set(_from ${TY_CONSOLE_VENDOR_DIR}/unpacked/package)
  file(COPY_FILE ${_from}/lib/xterm.js ${TY_CONSOLE_VENDOR_DIR}/xterm.js)
  file(COPY_FILE ${_from}/css/xterm.css ${TY_CONSOLE_VENDOR_DIR}/xterm.css)
  file(COPY_FILE ${_from}/LICENSE ${TY_CONSOLE_VENDOR_DIR}/xterm-LICENSE.txt)
endif()
