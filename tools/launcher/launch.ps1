# launch.ps1 - run one of this repository's Go binaries on a Windows runner.
#
# Usage: & launch.ps1 <binary-name> [args...]
#        powershell -NoProfile -NonInteractive -ExecutionPolicy Bypass -File launch.ps1 <binary-name> [args...]
#
# The Windows half of the one launcher contract (docs/packaging.md "The
# launcher contract"); tools/launcher/launch.sh is the POSIX half. Both follow
# the same steps, print the same reason codes and run against the same case
# table (internal/actioncontract/launchercases_test.go). Written for Windows
# PowerShell 5.1, which every supported Windows has (no Git Bash, no Go, no
# pwsh needed); it also runs under PowerShell 7 (pwsh), which is how the case
# table exercises it on Linux and macOS.
#
#   1. Refuse a binary name outside ^[a-z][a-z0-9-]*$       [binary-name]
#   2. Map RUNNER_OS/RUNNER_ARCH to GOOS/GOARCH.
#   3. Use the release asset <name>_<os>_<arch> only when the committed
#      .github/dist/manifest.json lists it AND the checkout's Go sources hash
#      to the manifest's source_digest AND BUILD_LOCK_FROM_SOURCE is not 1:
#      from the cache when its SHA-256 matches, else downloaded (https only,
#      redirects https only), verified BEFORE it is ever started, and stored
#      in the cache atomically.
#   4. Otherwise build it from the checkout's sources with a local Go; without
#      Go, fail naming the release to pin                     [no-go]
#   5. Start the binary in this console with the same arguments and
#      environment, wait for it, and exit with its exit code.
#
# Cancellation: the runner cancels a Windows step by attaching to the step
# process's console and generating CTRL_C, then CTRL_BREAK 7.5 s later, then
# killing the process tree 2.5 s after that (actions/runner
# src/Runner.Sdk/ProcessInvoker.cs). The binary shares this console, so it
# receives both events itself (Go delivers them as os.Interrupt). This script
# waits in one blocking WaitForExit() call, which a console control event does
# not interrupt, so it never exits before the binary has finished its cleanup.
#
# Every failure line is "build-lock launcher: error [<code>]: <message>".
# Never touches PATH, GITHUB_PATH, GITHUB_ENV or any environment variable.

$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 2.0

function Write-BlNote([string]$Message) {
    [Console]::Error.WriteLine("build-lock launcher: $Message")
}

# The one failure exit (status 1).
function Stop-Bl([string]$Code, [string]$Message) {
    [Console]::Error.WriteLine("build-lock launcher: error [$Code]: $Message")
    exit 1
}

function Get-BlEnv([string]$Name) {
    $v = [Environment]::GetEnvironmentVariable($Name)
    if ($null -eq $v) { return '' }
    return [string]$v
}

# Windows (MSVCRT/CommandLineToArgvW) quoting of one argument, so that the
# binary's os.Args are exactly the strings given here.
function ConvertTo-BlArgument([string]$Arg) {
    if ($Arg.Length -gt 0 -and $Arg -notmatch '[\s"]') { return $Arg }
    $sb = New-Object System.Text.StringBuilder
    [void]$sb.Append('"')
    $slashes = 0
    foreach ($ch in $Arg.ToCharArray()) {
        if ($ch -eq [char]'\') { $slashes++; continue }
        if ($ch -eq [char]'"') {
            [void]$sb.Append('\' * (2 * $slashes + 1))
            [void]$sb.Append('"')
        } else {
            if ($slashes -gt 0) { [void]$sb.Append('\' * $slashes) }
            [void]$sb.Append($ch)
        }
        $slashes = 0
    }
    if ($slashes -gt 0) { [void]$sb.Append('\' * (2 * $slashes)) }
    [void]$sb.Append('"')
    return $sb.ToString()
}

function Get-BlFileHash([string]$Path) {
    $sha = [System.Security.Cryptography.SHA256]::Create()
    try {
        $fs = [System.IO.File]::OpenRead($Path)
        try { $h = $sha.ComputeHash($fs) } finally { $fs.Dispose() }
    } finally { $sha.Dispose() }
    return ([BitConverter]::ToString($h) -replace '-', '').ToLowerInvariant()
}

function Test-BlReparse([string]$Path) {
    return (([System.IO.File]::GetAttributes($Path) -band [System.IO.FileAttributes]::ReparsePoint) -ne 0)
}

# The source digest (definition: tools/launcher/source-digest.sh header):
# go.mod, go.sum and every regular *.go file, skipping directories named .git,
# dist, bin and node_modules (and, like find, never following links); paths
# relative, '/'-separated, sorted bytewise; one "<sha256>  <path>\n" line each;
# the digest is the SHA-256 of that listing.
function Get-BlSourceDigest([string]$Root) {
    foreach ($f in @('go.mod', 'go.sum')) {
        if (-not [System.IO.File]::Exists([System.IO.Path]::Combine($Root, $f))) {
            throw "$Root has no go.mod/go.sum"
        }
    }
    $files = New-Object 'System.Collections.Generic.List[string]'
    $files.Add('go.mod')
    $files.Add('go.sum')
    $pending = New-Object 'System.Collections.Generic.Stack[string]'
    $pending.Push('')
    while ($pending.Count -gt 0) {
        $rel = $pending.Pop()
        $abs = $Root
        if ($rel -ne '') { $abs = [System.IO.Path]::Combine($Root, $rel) }
        foreach ($d in [System.IO.Directory]::GetDirectories($abs)) {
            $n = [System.IO.Path]::GetFileName($d)
            if ($n -ceq '.git' -or $n -ceq 'dist' -or $n -ceq 'bin' -or $n -ceq 'node_modules') { continue }
            if (Test-BlReparse $d) { continue }
            if ($rel -eq '') { $pending.Push($n) } else { $pending.Push("$rel/$n") }
        }
        foreach ($f in [System.IO.Directory]::GetFiles($abs)) {
            $n = [System.IO.Path]::GetFileName($f)
            if (-not $n.EndsWith('.go', [System.StringComparison]::Ordinal)) { continue }
            if (Test-BlReparse $f) { continue }
            if ($rel -eq '') { $files.Add($n) } else { $files.Add("$rel/$n") }
        }
    }
    $sorted = $files.ToArray()
    [Array]::Sort($sorted, [System.StringComparer]::Ordinal)
    $listing = New-Object System.Text.StringBuilder
    foreach ($f in $sorted) {
        $h = Get-BlFileHash ([System.IO.Path]::Combine($Root, $f))
        [void]$listing.Append($h).Append('  ').Append($f).Append("`n")
    }
    $sha = [System.Security.Cryptography.SHA256]::Create()
    try { $d = $sha.ComputeHash([System.Text.Encoding]::UTF8.GetBytes($listing.ToString())) } finally { $sha.Dispose() }
    return ([BitConverter]::ToString($d) -replace '-', '').ToLowerInvariant()
}

# Start the binary in this console (no redirection: its stdout carries
# workflow commands straight to the runner), wait, and exit with its code.
function Invoke-BlBinary([string]$Path, [string[]]$Arguments) {
    $psi = New-Object System.Diagnostics.ProcessStartInfo
    $psi.FileName = $Path
    $quoted = @()
    foreach ($a in $Arguments) { $quoted += (ConvertTo-BlArgument $a) }
    $psi.Arguments = ($quoted -join ' ')
    $psi.UseShellExecute = $false
    $p = [System.Diagnostics.Process]::Start($psi)
    $p.WaitForExit()
    exit $p.ExitCode
}

function Set-BlExecutable([string]$Path) {
    if ($script:blOnWindows) { return }
    # Only reached when the case table runs this script under pwsh on Linux
    # or macOS.
    $chmod = Start-Process -FilePath 'chmod' -ArgumentList @('755', $Path) -NoNewWindow -Wait -PassThru
    if ($chmod.ExitCode -ne 0) { throw "chmod $Path failed" }
}

# Move $From to $To unless $To exists (another job published it first).
function Publish-BlFile([string]$From, [string]$To) {
    try {
        [System.IO.File]::Move($From, $To)
        return $true
    } catch {
        Remove-Item -LiteralPath $From -Force -ErrorAction SilentlyContinue
        return $false
    }
}

# GET $Url to $OutFile: https only (plain http only on loopback, for tests),
# redirects followed by hand and only to https, 15 s to connect and answer,
# 300 s to read. Like curl --retry 3 in launch.sh, a transient failure (no
# answer, 408, 429, 500, 502, 503, 504) is tried again up to three times,
# two seconds apart; any other answer fails at once.
function Save-BlDownload([string]$Url, [string]$OutFile) {
    try {
        [System.Net.ServicePointManager]::SecurityProtocol = [System.Net.ServicePointManager]::SecurityProtocol -bor [System.Net.SecurityProtocolType]::Tls12
    } catch {
        Write-BlNote 'could not enable TLS 1.2 explicitly; using the system default'
    }
    $transient = @(408, 429, 500, 502, 503, 504)
    $lastError = ''
    for ($attempt = 1; $attempt -le 4; $attempt++) {
        if ($attempt -gt 1) { Start-Sleep -Seconds 2 }
        $target = [Uri]$Url
        $retry = $false
        try {
            for ($hop = 0; $hop -le 10; $hop++) {
                $req = [System.Net.HttpWebRequest][System.Net.WebRequest]::Create($target)
                $req.AllowAutoRedirect = $false
                $req.Timeout = 15000
                $req.ReadWriteTimeout = 300000
                $req.UserAgent = 'ambiguous-build-lock-launcher'
                $resp = $null
                try {
                    $resp = [System.Net.HttpWebResponse]$req.GetResponse()
                } catch [System.Net.WebException] {
                    $resp = $_.Exception.Response
                    if ($null -eq $resp) { $retry = $true; throw }
                }
                try {
                    $code = [int]$resp.StatusCode
                    if ($code -ge 300 -and $code -lt 400) {
                        $loc = $resp.Headers['Location']
                        if (-not $loc) { throw "redirect $code without Location" }
                        $next = New-Object System.Uri($target, $loc)
                        if ($next.Scheme -cne 'https') { throw "refusing a redirect to $($next.Scheme)" }
                        $target = $next
                        continue
                    }
                    if ($code -ne 200) {
                        $retry = ($transient -contains $code)
                        throw "HTTP $code"
                    }
                    $in = $resp.GetResponseStream()
                    $out = [System.IO.File]::Create($OutFile)
                    try { $in.CopyTo($out) } finally { $out.Dispose(); $in.Dispose() }
                    return $true
                } finally { $resp.Close() }
            }
            throw 'too many redirects'
        } catch {
            $lastError = $_.Exception.Message
            if (-not $retry) { break }
        }
    }
    Write-BlNote "download failed: $lastError"
    return $false
}

# --- arguments ------------------------------------------------------------------
$blArgv = @($args)
if ($blArgv.Count -lt 1) { Stop-Bl 'usage' 'usage: launch.ps1 <binary-name> [args...]' }
$blName = [string]$blArgv[0]
$blRest = @()
if ($blArgv.Count -gt 1) { $blRest = @($blArgv[1..($blArgv.Count - 1)] | ForEach-Object { [string]$_ }) }
if ($blName -cnotmatch '^[a-z][a-z0-9-]*\z') { Stop-Bl 'binary-name' 'refusing binary name: it must match ^[a-z][a-z0-9-]*$' }

$blRoot = [System.IO.Path]::GetFullPath([System.IO.Path]::Combine($PSScriptRoot, '..', '..'))
$script:blOnWindows = ((Get-BlEnv 'OS') -eq 'Windows_NT')

# --- platform -----------------------------------------------------------------
switch -CaseSensitive (Get-BlEnv 'RUNNER_OS') {
    'Linux' { $blOs = 'linux' }
    'macOS' { $blOs = 'darwin' }
    'Windows' { $blOs = 'windows' }
    '' {
        if ($script:blOnWindows) { $blOs = 'windows' }
        elseif ([System.Runtime.InteropServices.RuntimeInformation]::IsOSPlatform([System.Runtime.InteropServices.OSPlatform]::OSX)) { $blOs = 'darwin' }
        elseif ([System.Runtime.InteropServices.RuntimeInformation]::IsOSPlatform([System.Runtime.InteropServices.OSPlatform]::Linux)) { $blOs = 'linux' }
        else { Stop-Bl 'platform' 'unsupported operating system' }
    }
    default { Stop-Bl 'platform' "unsupported RUNNER_OS $(Get-BlEnv 'RUNNER_OS')" }
}
$blArch = 'unsupported' # X86, ARM: no release asset; a source build may still work
switch -CaseSensitive (Get-BlEnv 'RUNNER_ARCH') {
    'X64' { $blArch = 'amd64' }
    'ARM64' { $blArch = 'arm64' }
    '' {
        $pa = Get-BlEnv 'PROCESSOR_ARCHITEW6432'
        if ($pa -eq '') { $pa = Get-BlEnv 'PROCESSOR_ARCHITECTURE' }
        if ($pa -eq '' -and -not $script:blOnWindows) {
            $pa = [string][System.Runtime.InteropServices.RuntimeInformation]::OSArchitecture
        }
        switch ($pa) {
            'AMD64' { $blArch = 'amd64' }
            'X64' { $blArch = 'amd64' }
            'ARM64' { $blArch = 'arm64' }
        }
    }
}
$blExe = ''
if ($blOs -eq 'windows') { $blExe = '.exe' }
$blKey = "${blName}_${blOs}_${blArch}"

# --- cache root -------------------------------------------------------------------
$blCache = Get-BlEnv 'RUNNER_TOOL_CACHE'
if ($blCache -eq '') { $blCache = Get-BlEnv 'LOCALAPPDATA' }
if ($blCache -eq '') { $blCache = [System.IO.Path]::Combine((Get-BlEnv 'HOME'), '.cache') }
$blCache = [System.IO.Path]::Combine($blCache, 'ambiguous-build-lock')

# --- manifest -----------------------------------------------------------------------
# The same three regular expressions as launch.sh ([[:space:]] is \s): the
# manifest is machine-written in a canonical layout that a test enforces.
$blManifest = [System.IO.Path]::Combine($blRoot, '.github', 'dist', 'manifest.json')
$blM = ''
if ([System.IO.File]::Exists($blManifest)) { $blM = [System.IO.File]::ReadAllText($blManifest) }
$blWantDigest = ''
$m = [regex]::Match($blM, '"source_digest"\s*:\s*"([0-9a-f]*)"')
if ($m.Success) { $blWantDigest = $m.Groups[1].Value }
$blTag = ''
$m = [regex]::Match($blM, '"tag"\s*:\s*"([^"]*)"')
if ($m.Success) { $blTag = $m.Groups[1].Value }
$blSha = ''
$blUrl = ''
$m = [regex]::Match($blM, '"' + $blKey + '"\s*:\s*\{\s*"sha256"\s*:\s*"([0-9a-f]{64})"\s*,\s*"url"\s*:\s*"([^"]+)"')
if ($m.Success) {
    $blSha = $m.Groups[1].Value
    $blUrl = $m.Groups[2].Value
}

# The source digest of the checkout, memoized per pinned commit: the runner
# checks a pinned action out under _actions/<owner>/<repo>/<40-hex commit>,
# and a commit names its tree exactly.
$blPinned = [System.IO.Path]::GetFileName($blRoot)
if ($blPinned -cnotmatch '^[0-9a-f]{40}\z') { $blPinned = '' }
function Get-BlRootDigest {
    $memo = ''
    if ($blPinned -ne '') {
        $memo = [System.IO.Path]::Combine($blCache, 'digests', $blPinned)
        if ([System.IO.File]::Exists($memo)) {
            $d = [System.IO.File]::ReadAllText($memo)
            if ($d -cmatch '^[0-9a-f]{64}\z') { return $d }
        }
    }
    $d = Get-BlSourceDigest $blRoot
    if ($memo -ne '') {
        try {
            [void][System.IO.Directory]::CreateDirectory([System.IO.Path]::GetDirectoryName($memo))
            $tmp = "$memo.$PID"
            [System.IO.File]::WriteAllText($tmp, $d)
            if (-not (Publish-BlFile $tmp $memo)) {
                [System.IO.File]::Delete($memo)
                [void](Publish-BlFile $tmp $memo)
            }
        } catch {
            Write-BlNote 'could not memoize the source digest'
        }
    }
    return $d
}

# --- test release origin (tests only) -------------------------------------------------
# The same knob as launch.sh: BUILD_LOCK_TEST_RELEASE_ORIGIN replaces the
# scheme, host and port of the manifest's asset URL with a loopback https
# origin, for tests. Ignored in a pinned checkout (every consumer's), refused
# unless it is exactly https://{127.0.0.1|localhost|[::1]}:PORT; the
# manifest's SHA-256 still decides what runs, and nothing here relaxes TLS
# verification.
$blTestOrigin = Get-BlEnv 'BUILD_LOCK_TEST_RELEASE_ORIGIN'
if ($blTestOrigin -ne '') {
    if ($blPinned -ne '') {
        Write-BlNote 'ignoring BUILD_LOCK_TEST_RELEASE_ORIGIN: it is a test knob and this is a pinned checkout'
        $blTestOrigin = ''
    } elseif ($blTestOrigin -cnotmatch '^https://(127\.0\.0\.1|localhost|\[::1\]):[0-9]{1,5}\z') {
        Stop-Bl 'test-origin' 'BUILD_LOCK_TEST_RELEASE_ORIGIN must be https://127.0.0.1:PORT, https://localhost:PORT or https://[::1]:PORT (a test knob); unset it'
    }
}

# --- decide ---------------------------------------------------------------------------
$blDigest = ''
$blReason = ''
if ((Get-BlEnv 'BUILD_LOCK_FROM_SOURCE') -eq '1') {
    $blReason = 'BUILD_LOCK_FROM_SOURCE=1'
} elseif ($blSha -eq '') {
    $blReason = "the manifest has no release asset $blKey"
} else {
    try { $blDigest = Get-BlRootDigest } catch { Stop-Bl 'source-digest' "cannot compute the source digest of ${blRoot}: $($_.Exception.Message)" }
    if ($blDigest -cne $blWantDigest) {
        $t = $blTag
        if ($t -eq '') { $t = 'unknown' }
        $blReason = "this commit's Go sources differ from the manifest's source_digest (release $t)"
    }
}

# --- release asset path ------------------------------------------------------------------
if ($blReason -eq '') {
    $blDir = [System.IO.Path]::Combine($blCache, $blSha)
    $blBin = [System.IO.Path]::Combine($blDir, "$blName$blExe")
    $blShort = $blSha.Substring(0, 12)
    if ([System.IO.File]::Exists($blBin)) {
        if ((Get-BlFileHash $blBin) -ceq $blSha) {
            Write-BlNote "running $blKey $blTag (cache hit, sha256 $blShort)"
            Invoke-BlBinary $blBin $blRest
        }
        Write-BlNote "cached $blKey failed SHA-256 verification; discarding it and downloading again"
        Remove-Item -LiteralPath $blBin -Force
    }
    if ($blTestOrigin -ne '') {
        $rest = $blUrl -creplace '^[A-Za-z][A-Za-z0-9+.-]*://', ''
        $slash = $rest.IndexOf('/')
        if ($slash -ge 0) { $blUrl = $blTestOrigin + $rest.Substring($slash) } else { $blUrl = "$blTestOrigin/" }
    }
    if ($blUrl -cnotmatch '^(https://|http://127\.0\.0\.1:|http://localhost:)') {
        Stop-Bl 'insecure-url' "manifest URL for $blKey must be https://"
    }
    try { [void][System.IO.Directory]::CreateDirectory($blDir) } catch { Stop-Bl 'cache' "cannot create cache directory $blDir" }
    $blTmp = [System.IO.Path]::Combine($blDir, ".download.$PID.$([Guid]::NewGuid().ToString('N'))")
    if (-not (Save-BlDownload $blUrl $blTmp)) {
        Remove-Item -LiteralPath $blTmp -Force -ErrorAction SilentlyContinue
        Stop-Bl 'download' "download of $blKey ($blTag) failed after retries: $blUrl"
    }
    $blGot = Get-BlFileHash $blTmp
    if ($blGot -cne $blSha) {
        Remove-Item -LiteralPath $blTmp -Force -ErrorAction SilentlyContinue
        Stop-Bl 'checksum-mismatch' "checksum mismatch for ${blKey}: the manifest pins sha256 $blSha but the download is $blGot; refusing to run it"
    }
    Set-BlExecutable $blTmp
    # Atomic publish; a concurrent job may have published (and be running)
    # the same file, which is then used if it verifies.
    if (-not (Publish-BlFile $blTmp $blBin)) {
        if (-not ([System.IO.File]::Exists($blBin) -and ((Get-BlFileHash $blBin) -ceq $blSha))) {
            Stop-Bl 'cache' "cannot store $blKey in $blDir"
        }
    }
    Write-BlNote "running $blKey $blTag (downloaded and verified, sha256 $blShort)"
    Invoke-BlBinary $blBin $blRest
}

# --- source build path ---------------------------------------------------------------------
$blGo = Get-BlEnv 'BUILD_LOCK_GO'
if ($blGo -eq '') { $blGo = 'go' }
$blGoCmd = Get-Command -Name $blGo -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
if ($null -eq $blGoCmd) {
    $repo = Get-BlEnv 'BUILD_LOCK_ACTION_REPOSITORY'
    if ($repo -eq '') { $repo = Get-BlEnv 'GITHUB_ACTION_REPOSITORY' }
    if ($blTag -ne '') {
        $pin = "pin the commit that release tag $blTag points to"
    } elseif ($repo -ne '') {
        $pin = "pin the commit a release tag of $repo points to (https://github.com/$repo/releases)"
    } else {
        $pin = 'pin the commit a release tag of this repository points to'
    }
    Stop-Bl 'no-go' "cannot run ${blName}: $blReason, so it must be built from source, but no Go toolchain ('$blGo') was found. Either $pin (its .github/dist/manifest.json lists $blKey), or install Go (version in go.mod) on this runner."
}
if (-not [System.IO.Directory]::Exists([System.IO.Path]::Combine($blRoot, 'cmd', $blName))) {
    Stop-Bl 'no-command' "no command cmd/$blName in $blRoot"
}
if ($blDigest -eq '') {
    try { $blDigest = Get-BlRootDigest } catch { Stop-Bl 'source-digest' "cannot compute the source digest of ${blRoot}: $($_.Exception.Message)" }
}
$blDir = [System.IO.Path]::Combine($blCache, "src-$blDigest-${blOs}_$blArch")
$blBin = [System.IO.Path]::Combine($blDir, "$blName$blExe")
$blSum = "$blBin.sha256"
$blShort = $blDigest.Substring(0, 12)
# The side file records the hash of the binary as built, so a truncated or
# replaced file is rebuilt rather than run.
if ([System.IO.File]::Exists($blBin) -and [System.IO.File]::Exists($blSum) -and
    ((Get-BlFileHash $blBin) -ceq [System.IO.File]::ReadAllText($blSum))) {
    Write-BlNote "running $blName built from source $blShort (cache hit; $blReason)"
    Invoke-BlBinary $blBin $blRest
}
try { [void][System.IO.Directory]::CreateDirectory($blDir) } catch { Stop-Bl 'cache' "cannot create cache directory $blDir" }
$blTmp = [System.IO.Path]::Combine($blDir, ".build.$PID.$([Guid]::NewGuid().ToString('N'))$blExe")
# Build output goes to stderr: the binary's stdout carries workflow commands.
$psi = New-Object System.Diagnostics.ProcessStartInfo
$psi.FileName = $blGoCmd.Path
$psi.Arguments = (@('build', '-trimpath', '-buildvcs=false', '-ldflags', '"-s -w -buildid="', '-o', (ConvertTo-BlArgument $blTmp), "./cmd/$blName") -join ' ')
$psi.WorkingDirectory = $blRoot
$psi.UseShellExecute = $false
$psi.RedirectStandardOutput = $true
$psi.EnvironmentVariables['CGO_ENABLED'] = '0'
$build = [System.Diagnostics.Process]::Start($psi)
$buildOut = $build.StandardOutput.ReadToEnd()
$build.WaitForExit()
if ($buildOut -ne '') { [Console]::Error.Write($buildOut) }
if ($build.ExitCode -ne 0) {
    Remove-Item -LiteralPath $blTmp -Force -ErrorAction SilentlyContinue
    Stop-Bl 'build' "go build ./cmd/$blName failed (see above)"
}
$blH = Get-BlFileHash $blTmp
if (-not (Publish-BlFile $blTmp $blBin)) {
    if (-not [System.IO.File]::Exists($blBin)) { Stop-Bl 'cache' "cannot store $blName in $blDir" }
    $blH = Get-BlFileHash $blBin
}
try {
    $t = "$blSum.$PID"
    [System.IO.File]::WriteAllText($t, $blH)
    if (-not (Publish-BlFile $t $blSum)) {
        Remove-Item -LiteralPath $blSum -Force -ErrorAction SilentlyContinue
        [void](Publish-BlFile $t $blSum)
    }
} catch {
    Write-BlNote 'could not record the build hash'
}
Write-BlNote "running $blName built from source $blShort ($blReason)"
Invoke-BlBinary $blBin $blRest
