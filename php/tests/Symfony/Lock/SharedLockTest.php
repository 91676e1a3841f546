<?php

declare(strict_types=1);

namespace Goblin\Tests\Symfony\Lock;

use Goblin\Symfony\Lock\GoblinStore;
use Goblin\Tests\Servers;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\SharedLockInterface;

/**
 * What Symfony's shared-lock tests do not wait for: readers and writers waiting in one line in
 * the server (a process forked for each waiter), a waiting writer never passed by new readers,
 * and Symfony's Lock on the store, reading and writing.
 *
 * @requires extension pcntl
 */
final class SharedLockTest extends TestCase
{
    private static function store(): GoblinStore
    {
        return new GoblinStore(Servers::redis(), 30);
    }

    /**
     * Forks a process that runs `$wait` on a store of its own, then writes the server's time
     * (ms) to `$granted` and exits 0 (1 if `$wait` threw). Returns once the server has it in
     * line (`INFO goblin`'s goblin_waiting).
     *
     * @param callable(GoblinStore): void $wait
     */
    private static function waiter(callable $wait, string $granted): int
    {
        $raw = Servers::redis();
        $before = self::waiting($raw);
        $child = pcntl_fork();
        if (0 === $child) {
            try {
                $wait(self::store());
                Servers::redis()->set($granted, (string) Servers::now());
                exit(0);
            } catch (\Throwable) {
                exit(1);
            }
        }
        $deadline = microtime(true) + 30;
        while (self::waiting($raw) <= $before) {
            self::assertLessThan($deadline, microtime(true), 'the waiter never got in line');
            usleep(5_000);
        }

        return $child;
    }

    private static function waiting(\Redis $raw): int
    {
        return (int) ($raw->info('goblin')['goblin_waiting'] ?? 0);
    }

    private static function exited(int $child): int
    {
        pcntl_waitpid($child, $status);

        return pcntl_wexitstatus($status);
    }

    public function testAReaderWaitsInLineForTheWriterAndReadsTheMomentItLetsGo(): void
    {
        $raw = Servers::redis();
        $resource = uniqid('doc-', true);
        $store = self::store();
        $store->save($writer = new Key($resource));
        $reader = self::waiter(static fn (GoblinStore $store) => $store->waitAndSaveRead(new Key($resource)), "$resource:read");
        $released = Servers::now();
        $store->delete($writer);
        $this->assertSame(0, self::exited($reader));
        $this->assertGreaterThanOrEqual($released, (int) $raw->get("$resource:read"));
        $this->assertSame(\Redis::REDIS_ZSET, $raw->type($resource), 'a read lease');
    }

    public function testNewReadersNeverPassAWaitingWriter(): void
    {
        $raw = Servers::redis();
        $resource = uniqid('doc-', true);
        $store = self::store();
        $store->saveRead($first = new Key($resource));
        $writer = self::waiter(static fn (GoblinStore $store) => $store->waitAndSave(new Key($resource)), "$resource:write");
        try {
            $store->saveRead(new Key($resource));
            $this->fail('a new reader passed the waiting writer');
        } catch (LockConflictedException) {
        }
        $released = Servers::now();
        $store->delete($first);
        $this->assertSame(0, self::exited($writer));
        $this->assertGreaterThanOrEqual($released, (int) $raw->get("$resource:write"));
    }

    public function testSymfonysLockReadsAndWritesOnTheStore(): void
    {
        $factory = new LockFactory(self::store());
        $resource = uniqid('doc-', true);
        $reading = $factory->createLock($resource, 30);
        $other = $factory->createLock($resource, 30);
        \assert($reading instanceof SharedLockInterface && $other instanceof SharedLockInterface);
        $this->assertTrue($reading->acquireRead(true));
        $this->assertTrue($other->acquireRead(false), 'readers share');
        $this->assertFalse($factory->createLock($resource, 30)->acquire(false), 'a writer waits for them');
        $other->release();
        $this->assertTrue($reading->acquire(false), 'the sole reader promoted');
        $this->assertTrue($reading->isAcquired());
        $reading->refresh(5);
        $this->assertLessThanOrEqual(5, $reading->getRemainingLifetime());
        $this->assertLessThanOrEqual(5000, Servers::redis()->pTTL($resource));
        $reading->release();
        $this->assertSame(0, Servers::redis()->exists($resource));
    }
}
