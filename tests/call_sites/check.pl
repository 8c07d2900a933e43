#!/usr/bin/env perl
# Every public function that can fail records its caller's file:line.
#
# An error names the call site that the last GB_AT macro recorded
# (gb_base.h), so a fallible public function without its macro reports
# the line of some earlier, unrelated call. This script reads the public
# headers (framework/gb_*.h) and the framework's sources and fails,
# naming the function, when one that can fail has no call-site macro.
#
# The rule: a function declared in a public header needs a macro
#   (a) if it can report a failure to its caller: it returns a pointer,
#       bool or gb_status; except a *reader*, which returns a const
#       pointer or a bool and takes no non-const pointer (gb_shape,
#       gb_variable_name, gb_ok: it only looks at what it is given);
#   (b) whatever it returns, if its definition can record an error: it
#       calls gb__error or gb__verror, directly or through functions
#       defined in framework/ (calls through function pointers and
#       macros are not followed);
# unless it is on the allow-list below: functions that by (a) look
# fallible but never record an error. An allow-listed function that can
# record one by (b) fails the check too, and so does a macro that wraps
# another function or sits outside the `#if !defined(GB_BUILDING_LIBRARY)`
# block (the library must call itself directly).
#
#   check.pl SRC_ROOT [--header TEXT] [--source TEXT]
# --header/--source add declarations/definitions as if they were in a
# public header/framework source: the test suite uses them to show that a
# forgotten macro is caught.
use strict;
use warnings;

# Fallible-looking by (a) but never record an error: each says why.
my %allowed = (
    gb_shape_str       => 'formats into the caller\'s buffer',
    gb_to_f64          => 'false for NULL or symbolic tensors, recording nothing',
    gb_get_step        => 'false while no step is set',
    gb_module_state    => 'a pointer into the module',
    gb_module_retain   => 'counts a reference',
    gb_module_submodule => 'NULL when out of range',
    gb_module_find     => 'NULL when absent (Keras get_layer)',
    gb_module_variable => 'NULL when absent',
    gb_sequential_layer => 'NULL when out of range',
    gb_dataset_ref     => 'counts a reference',
    gb_iterator_get_stats => 'copies counters',
    gb_optimizer_slot  => 'NULL when absent',
);
my @recorders = qw(gb__error gb__verror);

my $root = shift @ARGV or die "usage: check.pl SRC_ROOT [--header TEXT] [--source TEXT]\n";
my (@extra_headers, @extra_sources);
while (@ARGV) {
    my $opt = shift @ARGV;
    my $text = shift @ARGV // die "$opt needs a text\n";
    if ($opt eq '--header') { push @extra_headers, $text }
    elsif ($opt eq '--source') { push @extra_sources, $text }
    else { die "unknown option $opt\n" }
}

sub slurp { local $/; open my $f, '<', $_[0] or die "$_[0]: $!\n"; <$f> }

# Comments and string literals out (strings may hold braces and
# semicolons), line continuations joined.
sub code_of {
    my $s = shift;
    $s =~ s{/\*.*?\*/}{ }gs;
    $s =~ s{//[^\n]*}{}g;
    $s =~ s{"(?:\\.|[^"\\\n])*"}{""}g;
    $s =~ s{'(?:\\.|[^'\\\n])*'}{''}g;
    $s =~ s{\\\n}{ }g;
    return $s;
}

# ---- the public headers: declarations and call-site macros ------------------------------
my (%decl, %macro, @problems);
sub read_header {
    my ($name, $text) = @_;
    my $code = code_of($text);
    my @guards;
    for my $line (split /\n/, $code) {
        if ($line =~ /^\s*#\s*(if|ifdef|ifndef)\b(.*)/) {
            push @guards, $2 =~ /!\s*defined\s*\(\s*GB_BUILDING_LIBRARY\s*\)/ ? 1 : 0;
        } elsif ($line =~ /^\s*#\s*endif\b/) {
            pop @guards;
        } elsif ($line =~ /^\s*#\s*define\s+(gb_\w+)\(\.\.\.\)\s*GB_AT\(\s*(\w+)\s*,/) {
            my ($m, $fn) = ($1, $2);
            $macro{$m} = $name;
            push @problems, "$m: its call-site macro wraps $fn" if $fn ne $m;
            push @problems, "$m: its call-site macro is outside the "
                . "#if !defined(GB_BUILDING_LIBRARY) block ($name)" unless grep { $_ } @guards;
        }
    }
    (my $decls = $code) =~ s/^\s*#[^\n]*//mg;
    for my $d (split /[;{}]/, $decls) {
        $d =~ s/\s+/ /g;
        $d =~ s/^ | $//g;
        next if $d =~ /^typedef\b/;
        next unless $d =~ /^(?:extern )?([\w *]*?[ *])(gb_\w+) ?\((.*)\)(?: __attribute__.*)?$/;
        my ($ret, $fn, $params) = ($1, $2, $3);
        next if $ret =~ /[()]/;
        $ret =~ s/ +$//;
        $ret =~ s/ +\*/*/g;
        $decl{$fn} = {header => $name, ret => $ret, params => $params};
    }
}
for my $h (sort glob "$root/framework/gb_*.h") {
    (my $name = $h) =~ s{^\Q$root\E/}{};
    read_header($name, slurp($h));
}
read_header("injected header", $_) for @extra_headers;

# ---- the sources: which functions can record an error -----------------------------------
my %calls;   # function name -> {callee => 1}, over every definition of that name
sub read_source {
    my $code = code_of(shift);
    while ($code =~ /^[A-Za-z_][^;{}()#=]*?\b([A-Za-z_]\w*)\s*\([^;{}]*?\)\s*\{/mg) {
        my ($fn, $start, $depth, $i) = ($1, pos($code), 1, pos($code));
        while ($depth && $i < length $code) {
            my $c = substr($code, $i++, 1);
            $depth += $c eq '{' ? 1 : $c eq '}' ? -1 : 0;
        }
        my $body = substr($code, $start, $i - $start);
        $calls{$fn}{$1} = 1 while $body =~ /\b([A-Za-z_]\w*)\s*\(/g;
        pos($code) = $i;
    }
}
read_source(slurp($_)) for split /\n/, `find "$root/framework" -name '*.c' | sort`;
read_source($_) for @extra_sources;

# Whether fn can reach a recorder; the path found, for the message.
my %via = map { $_ => [$_] } @recorders;
my $changed = 1;
while ($changed) {
    $changed = 0;
    for my $fn (sort keys %calls) {
        next if $via{$fn};
        for my $callee (sort keys %{$calls{$fn}}) {
            next unless $via{$callee};
            $via{$fn} = [$fn, @{$via{$callee}}];
            $changed = 1;
            last;
        }
    }
}

# ---- the rule -------------------------------------------------------------------------------
sub fallible_return {
    my $ret = shift;
    return 'returns a pointer' if $ret =~ /\*$/;
    return "returns $ret" if $ret eq 'bool' || $ret eq 'gb_status';
    return;
}
sub is_reader {
    my ($ret, $params) = @_;
    return 0 unless $ret =~ /^const\b.*\*$/ || $ret eq 'bool';
    for my $p (split /,/, $params) {
        $p =~ s/^ +//;
        return 0 if ($p =~ /\*|\[/) && $p !~ /^const\b/;
    }
    return 1;
}

for my $fn (sort keys %decl) {
    my $d = $decl{$fn};
    my $path = $via{$fn} && join(' -> ', @{$via{$fn}});
    if ($allowed{$fn}) {
        push @problems, "$fn: allow-listed as never failing, but it can record an error ($path)"
            if $path;
        next;
    }
    next if $macro{$fn};
    my $why = fallible_return($d->{ret});
    $why = undef if $why && is_reader($d->{ret}, $d->{params});
    $why //= "can record an error ($path)" if $path;
    next unless $why;
    push @problems, "$fn ($d->{header}): $why but has no call-site macro; add "
        . "`#define $fn(...) GB_AT($fn, __VA_ARGS__)` to the header's call-site block";
}
for my $fn (sort keys %allowed) {
    push @problems, "$fn: on the allow-list but declared in no public header" unless $decl{$fn};
}
for my $fn (sort keys %macro) {
    push @problems, "$fn: a call-site macro for a function no public header declares"
        unless $decl{$fn};
}

my $n = keys %decl;
if (@problems) {
    print "call sites: $_\n" for @problems;
    print scalar(@problems) . " problem(s) among $n public functions\n";
    exit 1;
}
printf "call sites: %d public functions, %d wrapped, the rest cannot fail\n", $n,
    scalar(grep { $macro{$_} } keys %decl);
exit 0;
